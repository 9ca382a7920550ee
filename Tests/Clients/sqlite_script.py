#!/usr/bin/env python3
"""Runs SQL on a SQLite database with Python's sqlite3: another SQLite client, as another process would be.

Usage: sqlite_script.py DATABASE SQL (DiskCacheIndexTests)."""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
db.executescript(sys.argv[2])
db.commit()
