// Small live charts for the admin console: Prometheus text summed per metric, and a sparkline per series (SVG; no
// inline styles, which the server's Content-Security-Policy refuses).
const SVG = "http://www.w3.org/2000/svg";

/** Prometheus text format 0.0.4 → {metric name: the sum of its samples over every label set}. */
export function sample(text) {
  const totals = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value)) totals[match[1]] = (totals[match[1]] ?? 0) + value;
  }
  return totals;
}

function format(value) {
  if (value >= 1e6) return (value / 1e6).toFixed(1) + "M";
  if (value >= 1e4) return (value / 1e3).toFixed(0) + "k";
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

/** A figure: the title, the latest value, and the last values as a line (the highest one labelled). */
export function chart(title, values, id, description = "") {
  const width = 240, height = 56;
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.dataset.chart = id;
  const caption = document.createElement("figcaption");
  const name = document.createElement("span");
  name.textContent = title;
  const latest = document.createElement("strong");
  latest.dataset.testid = `chart-${id}`;
  latest.textContent = values.length ? format(values[values.length - 1]) : "…";
  caption.append(name, latest);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("preserveAspectRatio", "none");  // the line spans the figure's width whatever its shape
  const highest = values.length ? Math.max(...values) : 0;
  const top = Math.max(1, highest);
  svg.setAttribute("aria-label", `${title}${description ? ` (${description})` : ""}: ${values.length ? format(values[values.length - 1]) : "no sample yet"}, at most ${format(highest)} in the last ${values.length} samples`);
  const baseline = document.createElementNS(SVG, "line");
  baseline.setAttribute("x1", "0"); baseline.setAttribute("x2", String(width));
  baseline.setAttribute("y1", String(height - 1)); baseline.setAttribute("y2", String(height - 1));
  baseline.setAttribute("class", "baseline");
  svg.append(baseline);
  if (values.length > 1) {
    const step = width / 59;
    const x0 = width - step * (values.length - 1);
    const points = values.map((v, i) => `${(x0 + i * step).toFixed(1)},${(height - 2 - (v / top) * (height - 8)).toFixed(1)}`).join(" ");
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", points);
    line.setAttribute("class", "line");
    svg.append(line);
  }
  const peak = document.createElement("small");
  peak.className = "peak";
  peak.textContent = `max ${format(highest)}`;
  figure.append(caption, svg, peak);
  return figure;
}
