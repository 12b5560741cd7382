"""ink: a coding agent for the terminal with first-class run control."""

__version__ = "0.1.0"
