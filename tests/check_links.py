"""Every relative link in the README, docs/ and each harness folder's README resolves:
the file it names is in the repository (and an anchor after `#` is one of its
headings). Run by .ci/run; prints each broken link and exits 1 when there is one."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages():
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / p for p in listed if "node_modules" not in p and "/fixtures/" not in p]


def anchors(page):
    """GitHub's anchors of a page's headings."""
    found = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            title = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            found.add(title)
    return found


def broken():
    for page in pages():
        text = page.read_text()
        # Code is not prose: links inside fenced blocks are examples.
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#") and not target[1:]:
                continue
            path, _, anchor = target.partition("#")
            named = (page.parent / path).resolve() if path else page
            if not named.exists():
                yield f"{page.relative_to(ROOT)}: {target} (no such file)"
            elif anchor and named.suffix == ".md" and anchor not in anchors(named):
                yield f"{page.relative_to(ROOT)}: {target} (no such heading)"


if __name__ == "__main__":
    bad = list(broken())
    for line in bad:
        print(line)
    print(f"{len(bad)} broken links" if bad else "every link resolves")
    sys.exit(1 if bad else 0)
