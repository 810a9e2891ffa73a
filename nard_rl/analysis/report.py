"""Reports of a match analysis: the terminal text, and a self-contained HTML page with
the winning-chance chart (matplotlib, embedded as a PNG: no network, no scripts) and
the marked decisions drawn as boards.

Both read the JSON object (``MatchAnalysis.to_dict``), the one shape every front end
shares, so a report can also be made later from a saved ``--json`` file.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from nard_rl.engine.ascii import render_board

WORST = 20
"""Decisions listed by the text report (worst first)."""


def _describe(d: dict[str, Any]) -> str:
    if d["kind"] == "checker":
        return f"{d['dice'][0]}{d['dice'][1]}: {d['played'] or '(no move)'}"
    return d["played"]


def _rate(block: dict[str, Any]) -> str:
    return f"{block['error_rate']:7.1f}" if block["decisions"] else "      -"


def text_report(result: dict[str, Any], worst: int = WORST) -> str:
    """The terminal report: the per-player table, then the worst decisions first with
    the better play (equity lost in mEMG, as gnubg prints it)."""
    names = result["names"]
    length = result["match_length"]
    what = f"{length}-point match" if length else "money session"
    lines = [
        f"{result['source']}: {what}, {len(result['games'])} game(s); "
        f"checker play at {result['ply']}-ply, cube at {result['cube_ply']}-ply",
        "",
        f"{'':34}" + "".join(f"{n[:18]:>20}" for n in names),
    ]
    players = [result["players"][n] for n in names]
    rows = [
        ("Checker decisions (unforced)", lambda p: f"{p['checker']['decisions']:7d}"),
        ("  error rate (mEMG/decision)", lambda p: _rate(p["checker"])),
        ("Cube decisions (close/actual)", lambda p: f"{p['cube']['decisions']:7d}"),
        ("  error rate (mEMG/decision)", lambda p: _rate(p["cube"])),
        ("Overall error rate (mEMG)", lambda p: _rate(p["overall"])),
        (
            "Marked doubtful / bad / very bad",
            lambda p: "{doubtful}/{bad}/{very bad}".format(**p["overall"]["marks"]),
        ),
        ("Luck rate (mEMG/roll)", lambda p: f"{p['luck_rate']:+7.1f}"),
        ("Luck total (mEMG)", lambda p: f"{p['luck_total']:+7.0f}"),
        ("Rating", lambda p: p["rating"] or "-"),
    ]
    for label, cell in rows:
        lines.append(f"{label:34}" + "".join(f"{cell(p):>20}" for p in players))
    bad = sorted(
        (d for d in result["decisions"] if d["equity_lost"] > 0),
        key=lambda d: -d["equity_lost"],
    )
    lines += ["", f"Worst decisions ({min(worst, len(bad))} of {len(bad)} with an error):"]
    for d in bad[:worst]:
        mark = f"  {d['mark']}" if d["mark"] else ""
        lines.append(
            f"  game {d['game']} move {d['move_number']:3d}  {d['player'][:14]:14}  "
            f"{_describe(d):34} better: {d['best']:24} -{d['equity_lost']:.1f}{mark}"
        )
    return "\n".join(lines) + "\n"


def chart_png(result: dict[str, Any], *, width: float = 10.0, height: float = 3.6) -> bytes:
    """The move-by-move chart of player 0's winning chance (its match-winning chance in
    a match), games separated by vertical lines, marked decisions as dots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = result["names"]
    match = bool(result["match_length"])
    key = "mwc" if match else "win"
    timeline = result["timeline"]
    xs = list(range(1, len(timeline) + 1))
    ys = [100.0 * (t[key] if t[key] is not None else t["win"]) for t in timeline]
    fig, ax = plt.subplots(figsize=(width, height), dpi=100)
    ax.plot(xs, ys, color="#1f5fa8", linewidth=1.6, label=f"{names[0]}")
    ax.plot(
        xs, [100.0 - y for y in ys], color="#b8462f", linewidth=1.0, alpha=0.7, label=f"{names[1]}"
    )
    ax.axhline(50.0, color="#999999", linewidth=0.6)
    index = {(t["game"], t["move_number"], t["player"]): i for i, t in enumerate(timeline)}
    games: dict[int, int] = {}
    for i, t in enumerate(timeline):
        games.setdefault(t["game"], i + 1)
    for g, x in games.items():
        if x > 1:
            ax.axvline(x - 0.5, color="#cccccc", linewidth=0.8)
        ax.text(x, 101, f"game {g}", fontsize=7, color="#666666", va="bottom")
    colours = {"doubtful": "#e0b000", "bad": "#e07000", "very bad": "#c00000"}
    for d in result["decisions"]:
        if not d["mark"]:
            continue
        i = index.get((d["game"], d["move_number"], d["player"]))
        if i is None:
            i = index.get((d["game"], d["move_number"], names[1 - d["player_index"]]))
        if i is None:
            continue
        ax.plot(xs[i], ys[i], "o", color=colours[d["mark"]], markersize=5)
    ax.set_ylim(0, 100)
    ax.set_xlim(0.5, max(1.5, len(xs) + 0.5))
    ax.set_xlabel("move")
    ax.set_ylabel("match winning chance (%)" if match else "winning chance (%)")
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
td, th { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.decision { display: inline-block; vertical-align: top; margin: 0 1.5em 1.5em 0; }
.decision pre { font-size: 11px; line-height: 1.15; background: #f6f6f2; padding: 0.4em; }
.doubtful { color: #a07800; } .bad { color: #c05000; } .very-bad { color: #b00000; }
"""


def html_report(result: dict[str, Any]) -> str:
    """A self-contained HTML page: the players' figures, the chart and every marked
    decision (board, the play made, the better play, the equity lost)."""
    e = html.escape
    names = result["names"]
    length = result["match_length"]
    what = f"{length}-point match" if length else "money session"
    png = base64.b64encode(chart_png(result)).decode("ascii")
    players = [result["players"][n] for n in names]
    rows = [
        ("Checker decisions", [str(p["checker"]["decisions"]) for p in players]),
        ("Checker error rate (mEMG)", [f"{p['checker']['error_rate']:.1f}" for p in players]),
        ("Cube decisions", [str(p["cube"]["decisions"]) for p in players]),
        ("Cube error rate (mEMG)", [f"{p['cube']['error_rate']:.1f}" for p in players]),
        ("Overall error rate (mEMG)", [f"{p['overall']['error_rate']:.1f}" for p in players]),
        ("Luck rate (mEMG/roll)", [f"{p['luck_rate']:+.1f}" for p in players]),
        ("Rating", [p["rating"] or "-" for p in players]),
    ]
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Analysis: {e(names[0])} vs {e(names[1])}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{e(names[0])} vs {e(names[1])}</h1>",
        f"<p>{e(str(result['source']))}: {what}, {len(result['games'])} game(s); checker "
        f"play at {result['ply']}-ply, cube at {result['cube_ply']}-ply. Equities in "
        "millipoints of normalised equity (mEMG).</p>",
        '<table id="players"><tr><th></th>' + "".join(f"<th>{e(n)}</th>" for n in names) + "</tr>",
    ]
    for label, cells in rows:
        out.append(
            f"<tr><td>{e(label)}</td>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>"
        )
    out.append("</table>")
    out.append(
        f'<img id="chart" alt="winning chances move by move" src="data:image/png;base64,{png}">'
    )
    marked = [d for d in result["decisions"] if d["mark"]]
    out.append(f"<h2>Marked decisions ({len(marked)})</h2>")
    out.append('<div id="decisions">')
    for d in marked:
        cls = d["mark"].replace(" ", "-")
        board = render_board(d["board"])
        out.append(
            f'<div class="decision"><h3>Game {d["game"]}, move {d["move_number"]}: '
            f"{e(d['player'])}</h3>"
            f"<p>Played <b>{e(_describe(d))}</b>, better <b>{e(d['best'])}</b>: "
            f'<span class="{cls}">-{d["equity_lost"]:.1f} ({e(d["mark"])})</span></p>'
            f"<pre>{e(board)}</pre></div>"
        )
    out.append("</div></body></html>")
    return "\n".join(out) + "\n"
