"""tokfx: exact, fast tokenizer training and encoding for LLM pretraining data."""
__version__ = "0.1.0"
