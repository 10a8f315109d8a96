"""Renderers: they format a finished result; they never compute or collect anything."""
