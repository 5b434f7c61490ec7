"""Ask a person: a visitor hands the conversation over to the project's support team."""
