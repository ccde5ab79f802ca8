"""What the trainer, the demo and the pre-filter share: rows, prompts, generation backends, models.

``data`` loads prompt rows (JSONL, Parquet, a hub dataset); ``prompts`` renders them into token
ids; ``generation`` holds the sampling and engine options and the backend protocol, which
``transformers_backend`` and ``vllm_backend`` implement and ``backends`` chooses between;
``loading`` loads tokenizers, ``tiny_model`` builds the small local model the demo and tests use,
and ``config_flags`` turns option dataclasses into command-line flags.
"""
