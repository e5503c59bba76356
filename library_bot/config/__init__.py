"""Layer 1, configuration: settings from the environment, proxies, logging and redaction."""
