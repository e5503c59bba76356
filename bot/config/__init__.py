"""Layer: configuration: settings from the environment, proxies, logging and redaction."""
