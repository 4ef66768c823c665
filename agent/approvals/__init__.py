"""Approval requests, decisions, and the approvers that answer them (terminal, webhook)."""
