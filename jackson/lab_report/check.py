"""Checking index.html: a parser pass (balanced tags, every image decodes or its file is there, every link
stays in the page) and, where a Chromium is installed, a headless load that records what failed."""
from __future__ import annotations

import base64
import html
import json
import re
import urllib.parse
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from .entries import MAGIC, SAFE_LINK, outside, readable_image


# ---- checking the page ------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Checker(HTMLParser):
    def __init__(self, root: Path | None = None):
        super().__init__(convert_charrefs=True)
        self.root = None if root is None else Path(root).resolve()
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.images = 0

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href is not None and not SAFE_LINK.match(href) and self._outside(href):
            self.problems.append(f"line {self.getpos()[0]}: <a href=\"{href[:60]}\"> breaks when the page travels alone")
        if tag == "img":
            self.images += 1
            self._check_img(dict(attrs).get("src") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.images += 1
            self._check_img(dict(attrs).get("src") or "")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()

    def _outside(self, href: str) -> bool:
        """A link that leaves the page: with no root (the page travels alone) any file link; with the page's
        root, a link to a file that is not under it."""
        return self.root is None or not _beside(self.root, href)

    def _check_file(self, src: str):
        why = _image_file_problem(self.root, src)
        if why:
            self.problems.append(f"line {self.getpos()[0]}: {why}")

    def _check_img(self, src: str):
        m = re.fullmatch(r"data:(image/[\w.+-]+);base64,([A-Za-z0-9+/=]+)", src)
        if not m and self.root is not None and not src.startswith("data:"):
            self._check_file(src)
            return
        if not m:
            self.problems.append(f"line {self.getpos()[0]}: <img> is not an inline base64 image")
            return
        try:
            data = base64.b64decode(m.group(2), validate=True)
        except ValueError:
            self.problems.append(f"line {self.getpos()[0]}: <img> base64 does not decode")
            return
        if not any(data.startswith(x) for x in MAGIC.get(m.group(1), (b"",))) or len(data) < 16:
            self.problems.append(f"line {self.getpos()[0]}: <img> bytes are not a {m.group(1)}")


def _inside(root: Path, ref: str) -> Path | None:
    """The file a page's (percent-encoded) relative reference names under root; None for a URL, an absolute
    path, a path that climbs out of root, or one whose symbolic links lead out of it."""
    rel = urllib.parse.unquote(ref)
    if re.match(r"^[a-z][a-z0-9+.-]*:", rel, re.I) or rel.startswith("/") or ".." in Path(rel).parts:
        return None
    return None if outside(root, root / rel) else root / rel


def _image_file_problem(root: Path, src: str) -> str:
    """'' when src is a relative path to an image file under root (a regular file, checked before it is opened:
    a FIFO would block); else what is wrong."""
    path = _inside(root, src)
    if path is None:
        return f"<img src=\"{src[:60]}\"> is not a path inside the report's folder"
    if not path.exists():
        return f"<img src=\"{src[:60]}\">: no such file beside the page"
    if not readable_image(path):
        return f"<img src=\"{src[:60]}\">: the file is not an image"
    return ""


def _beside(root: Path, href: str) -> bool:
    """A link (its #fragment aside) to a regular file under root (links followed)."""
    path = _inside(root, href.split("#", 1)[0])
    return path is not None and path.is_file()


def check_html(text: str, root: Path | None = None) -> tuple[list[str], int]:
    """(problems, number of images): balanced tags, every <img> an inline image whose bytes decode or, with the
    page's folder `root`, a file under it (a relative path that stays inside root) whose bytes are an image;
    every link inside the page, or with `root` to a file under it."""
    c = _Checker(root)
    c.feed(text)
    c.close()
    c.problems += [f"<{t}> never closed" for t in c.stack]
    return c.problems, c.images


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


# What the browser check injects first in <head> of a copy of the page: console.error, uncaught exceptions
# and resources that fail to load are recorded from the start; at `load` the script writes, as JSON into
# <pre id="__browser_check__">, the images that did not decode (naturalWidth 0), the "#id" links with no
# element of that id (or <a name>), and the errors.  `--dump-dom` then prints the DOM with it.
PROBE_ID = "__browser_check__"
PROBE = """<script>(function () {
  var errors = [];
  var error = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.map.call(arguments, String).join(" "));
    return error.apply(console, arguments);
  };
  window.addEventListener("error", function (ev) {
    var t = ev.target;
    if (t && t !== window && t.tagName) {
      var src = String(t.src || t.href || "");
      errors.push("failed to load <" + t.tagName.toLowerCase() + "> " + (src.slice(0, 5) === "data:" ? src.slice(0, 40) : src));
    } else {
      errors.push("uncaught: " + ev.message);
    }
  }, true);
  window.addEventListener("unhandledrejection", function (ev) { errors.push("unhandled rejection: " + ev.reason); });
  window.addEventListener("load", function () {
    var imgs = Array.prototype.slice.call(document.images);
    var broken = [];
    imgs.forEach(function (i, k) {
      if (!i.complete || !(i.naturalWidth > 0)) {
        broken.push("image #" + (k + 1) + " '" + (i.getAttribute("alt") || "") + "' ("
                    + String(i.getAttribute("src") || "").slice(0, 40) + ")");
      }
    });
    var links = Array.prototype.slice.call(document.querySelectorAll("a[href^='#']"));
    var dangling = links.map(function (a) { return a.getAttribute("href"); }).filter(function (h) {
      var id = h.slice(1);
      try { id = decodeURIComponent(id); } catch (e) {}
      return id !== "" && !document.getElementById(id) && document.getElementsByName(id).length === 0;
    });
    var outside = Array.prototype.slice.call(document.querySelectorAll("a[href]")).map(function (a) {
      return a.getAttribute("href");
    }).filter(function (h) { return !/^(#|https?:|mailto:)/i.test(h); });
    var out = document.createElement("pre");
    out.id = "__browser_check__";
    var nav = performance.getEntriesByType("navigation")[0];
    out.textContent = JSON.stringify({images: imgs.length, broken: broken, links: links.length,
                                      dangling: dangling, outside: outside, errors: errors,
                                      load_ms: nav ? nav.loadEventStart : performance.now()});
    document.body.appendChild(out);
  });
})();</script>"""


def _probed(page: str, base: str, eager: bool = True) -> str:
    """The page with <base> (relative URLs resolve as beside the original) and PROBE first in <head>; with
    `eager`, images load at once (a lazy image below the fold would never load in a headless window, so could
    not be checked); without it, as a reader's browser loads the page (for its load time)."""
    if eager:
        page = page.replace(' loading="lazy"', "")
    inject = f'<base href="{html.escape(base)}">' + PROBE
    m = re.search(r"<head\b[^>]*>", page, re.I)
    if m:
        return page[:m.end()] + inject + page[m.end():]
    m = re.search(r"<html\b[^>]*>", page, re.I)
    at = m.end() if m else 0
    return page[:at] + "<head>" + inject + "</head>" + page[at:]


def browser_report(path: Path, exe: str, timeout: int = 120, eager: bool = True) -> dict:
    """Load a copy of the page, with PROBE injected, in headless Chromium (`--dump-dom`, the command line
    only) and return what PROBE found: images, broken, links, dangling, errors.  Raises RuntimeError
    when Chromium fails or the page never reached `load`."""
    import tempfile
    path = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="browser-check-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_text(_probed(path.read_text(encoding="utf-8"), path.parent.as_uri() + "/", eager), encoding="utf-8")
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                f"--user-data-dir={tmp}/profile", "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()]
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"{exe}: {e}") from None
    m = re.search(rf'<pre id="{PROBE_ID}">(.*?)</pre>', p.stdout, re.S)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"{path.name} did not finish loading in Chromium (exit {p.returncode}): "
                           + p.stderr.strip()[-300:])
    return json.loads(html.unescape(m.group(1)))


def browser_check(path: Path, exe: str, timeout: int = 120, alone: bool = True) -> str | None:
    """Load the page in headless Chromium: None if every <img> decoded, every "#id" link has its element
    and nothing was logged as an error; else one line saying what went wrong.  With `alone` (a page that must
    travel alone) every link to a file is an error; without it only a link to a file that is not beside the
    page (under its folder)."""
    try:
        r = browser_report(path, exe, timeout)
    except RuntimeError as e:
        return str(e)
    if not alone:
        here = Path(path).resolve().parent
        r["outside"] = [h for h in r.get("outside", []) if not _beside(here, h)]
    problems = ([f"{len(r['broken'])} of {r['images']} images did not decode: " + "; ".join(r["broken"][:3])]
                if r["broken"] else [])
    problems += [f"{len(r['dangling'])} of {r['links']} internal links lead nowhere: " + ", ".join(r["dangling"][:5])] \
        if r["dangling"] else []
    problems += [f"{len(r['outside'])} links lead out of the page (they break when it travels alone): "
                 + ", ".join(r["outside"][:5])] if r.get("outside") else []
    problems += [f"{len(r['errors'])} console errors: " + "; ".join(r["errors"][:3])] if r["errors"] else []
    return " | ".join(problems) or None
