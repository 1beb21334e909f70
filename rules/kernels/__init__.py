"""The layer below the engines: what kernel libraries (FlashInfer, DeepGEMM, FA4, ...) support, per release, and
which of their entry points a config dispatches to (dispatch.py over dispatch.json; the wheel-read tables
deepgemm_archs.json and pins.json, and binaries.py's fatbin tables)."""
