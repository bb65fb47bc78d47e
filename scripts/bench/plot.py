"""A dependency-free SVG line plot for the benchmark's latency curve (log-log)."""
import math


def latency_svg(curve, path):
    """curve: [(sessions, {"anchor": (p50, p99, rps), "signupd": (...)})]"""
    width, height, left, bottom, top, right = 640, 360, 70, 50, 20, 150
    xs = [n for n, _ in curve]
    ys = [v for _, point in curve for kind in point for v in point[kind][:2] if v]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))

    def px(n):
        return left + (math.log10(n) - x0) / (x1 - x0) * (width - left - right)

    def py(v):
        return height - bottom - (math.log10(v) - y0) / (y1 - y0) * (height - bottom - top)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    for e in range(int(y0), int(y1) + 1):
        y = py(10 ** e)
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (left, width - right, y, y))
        label = "%d µs" % 10 ** e if e < 3 else "%d ms" % 10 ** (e - 3) if e < 6 else "%d s" % 10 ** (e - 6)
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 6, y + 4, label))
    for n in xs:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (px(n), height - bottom + 18, format(n, ",")))
    out.append('<text x="%d" y="%d" text-anchor="middle">open sessions (clients, 1 request in flight each)</text>' % ((left + width - right) / 2, height - 12))
    styles = {("signupd", 0): ("#c0392b", ""), ("signupd", 1): ("#c0392b", "6,4"), ("anchor", 0): ("#2c3e50", ""), ("anchor", 1): ("#2c3e50", "6,4")}
    legend_y = top + 10
    for (kind, index), (color, dash) in styles.items():
        points = " ".join("%.1f,%.1f" % (px(n), py(point[kind][index])) for n, point in curve if point[kind][index])
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" points="%s"/>' % (color, dash, points))
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>' % (
            width - right + 12, width - right + 40, legend_y, legend_y, color, dash))
        out.append('<text x="%d" y="%d">%s %s</text>' % (width - right + 46, legend_y + 4, kind, "p50" if index == 0 else "p99"))
        legend_y += 18
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
