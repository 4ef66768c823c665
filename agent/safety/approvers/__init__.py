"""Who answers an approval request: a person at the terminal, a webhook, or a recorded script."""
