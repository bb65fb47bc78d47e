#!/usr/bin/env python3
"""Fills a signupd SQLite database (already migrated by signupd) with N accounts, fast:
one transaction, a fixed placeholder hash (these accounts are never logged into).

usage: seed_accounts.py DATABASE N
"""
import sqlite3
import sys

db, n = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
con.execute("PRAGMA synchronous=OFF")
hash_ = "$argon2id$v=19$m=8,t=1,p=1$c2VlZGVkc2VlZGVk$placeholderplaceholderplaceholderplaceh"
with con:
    con.executemany(
        "INSERT INTO account (username, usernameKey, passwordHash, createdAt) VALUES (?, ?, ?, 0)",
        (("seed%d" % i, "seed%d" % i, hash_) for i in range(n)))
print("accounts=%d" % con.execute("SELECT count(*) FROM account").fetchone()[0])
