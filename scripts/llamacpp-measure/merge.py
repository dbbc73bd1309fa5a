#!/usr/bin/env python3
"""Add the runs of later sessions to a recorded measurements file.

Usage: merge.py RECORDED.json NEW.json [NEW.json ...]

Each NEW.json is what run.sh wrote for one session into a scratch file. Its
runs are appended to RECORDED.json's, each marked with the session's index,
and its "machine" block (load average at start and end) goes to
RECORDED.json's "sessions" list, so every run keeps the load it was measured
under. The first session's "machine" block stays where it is (session 0).
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    doc = json.load(open(out))
    sessions = doc.setdefault("sessions", [])
    for path in sys.argv[2:]:
        new = json.load(open(path))
        sessions.append(new["machine"])
        for r in new["runs"]:
            r["session"] = len(sessions)
            doc["runs"].append(r)
        print(f"{path}: {len(new['runs'])} runs, session {len(sessions)}")
    json.dump(doc, open(out, "w"), indent=1, sort_keys=True)
    open(out, "a").write("\n")
    print(f"{out}: {len(doc['runs'])} runs")


if __name__ == "__main__":
    main()
