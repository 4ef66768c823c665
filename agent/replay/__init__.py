"""Replay: a recorded session driven again. The replay client answers from a transcript
(`client`), `redrive` runs a recording against a fresh simulator with its tools for real, the
approvals come from the recording (`recorded_approvals`), and `recordings` names the bundled
ones. The Messages-API stand-in it talks to is agent/standin/."""
