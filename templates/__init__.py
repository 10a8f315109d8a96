"""Jinja2 templates and vendored assets of the HTML report (shipped as package data)."""
