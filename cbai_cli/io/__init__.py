"""Files, databases and streams: instance files read within limits, atomic writes, SQLite
errors in the user's words, output files checked before work starts, a guarded stdout."""
