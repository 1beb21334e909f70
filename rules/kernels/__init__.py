"""The layer below the engines: what kernel libraries (FlashInfer, ...) support, per release."""
