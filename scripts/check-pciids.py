#!/usr/bin/env python3
"""Check the PCI ids of internal/specs/records.go against a pci.ids file.

Usage: scripts/check-pciids.py path/to/pci.ids [internal/specs/records.go]

pci.ids is the PCI ID repository's database (https://github.com/pciutils/pciids,
file pci.ids); fetch it yourself, nothing here uses the network. For every id a
record lists (PCIIDs and SharedPCIIDs) it prints the record, the name pci.ids
gives the id and, when something is wrong, why: the id is not in pci.ids (the
record must then cite another source), the IdentitySource quotes another name
than pci.ids, or it lacks the https://pci-ids.ucw.cz/read/PC/<vendor>/<device>
URL. Exit status 1 when an id in pci.ids is quoted wrongly or not cited.
"""
import re
import sys


def read_pciids(path):
    db, vendor = {}, None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("C "):  # device classes follow the vendors
            vendor = None
            continue
        if not line.startswith("\t"):
            m = re.match(r"([0-9a-f]{4})\s+(.*)", line)
            vendor = m.group(1) if m else None
            if vendor:
                db[vendor] = {}
            continue
        m = re.match(r"\t([0-9a-f]{4})\s+(.*)", line)
        if vendor and m and not line.startswith("\t\t"):
            db[vendor][m.group(1)] = m.group(2).strip()
    return db


def go_strings(expr):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', expr)).replace('\\"', '"')


def main():
    db = read_pciids(sys.argv[1])
    src = open(sys.argv[2] if len(sys.argv) > 2 else "internal/specs/records.go").read()
    consts = {m.group(1): go_strings(m.group(2))
              for m in re.finditer(r'const (\w+) = ((?:"(?:[^"\\]|\\.)*"\s*\+?\s*)+)', src)}
    bad = 0
    for rec in re.split(r"\n\t\{Name: ", src)[1:]:
        name = re.match(r'"([^"]*)"', rec).group(1)
        ids = []
        for field in ("PCIIDs", "SharedPCIIDs"):
            m = re.search(field + r':\s*\[\]string\{([^}]*)\}', rec)
            if m:
                ids += re.findall(r'"([0-9a-f]{4}:[0-9a-f]{4})"', m.group(1))
        m = re.search(r'IdentitySource:\s*((?:(?:"(?:[^"\\]|\\.)*"|\w+)\s*\+?\s*)+),', rec)
        ident = ""
        if m:
            for part in re.findall(r'"(?:[^"\\]|\\.)*"|\w+', m.group(1)):
                ident += go_strings(part) if part.startswith('"') else consts.get(part, "")
        for i in ids:
            v, d = i.split(":")
            real = db.get(v, {}).get(d)
            quoted = re.search(re.escape(i) + r' "([^"]*)"', ident)
            why = []
            if real is None:
                why.append("not in pci.ids: cite another source")
            else:
                if quoted and quoted.group(1) != real:
                    why.append("quoted %r" % quoted.group(1))
                if "https://pci-ids.ucw.cz/read/PC/%s/%s" % (v, d) not in ident:
                    why.append("no pci-ids.ucw.cz URL")
                    bad += 1
                elif quoted and quoted.group(1) != real:
                    bad += 1
            print("%-9s %-50s pci.ids %-60r %s" % (i, name[:50], real, "; ".join(why) or "ok"))
    print("mismatches:", bad)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
