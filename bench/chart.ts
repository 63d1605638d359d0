/**
 * A small SVG chart writer: a figure of panels in a grid, each panel horizontal grouped bars (one
 * group per target, one bar per series) on a linear or log axis, with reference lines, a legend, the
 * value at every bar's end, and hatched bars for estimates; or a panel of text lines.
 * Written here instead of pulling in a plotting stack: the bench needs only bars, and a dependency
 * that renders through a headless browser or a native canvas would outweigh the bench itself.
 */

export interface Series {
  name: string;
  color: string;
}

export interface BarGroup {
  label: string;
  /** One value per series; undefined or not finite draws no bar. */
  values: (number | undefined)[];
  /** Drawn hatched and marked as an estimate. */
  estimated?: boolean;
  /** A second, smaller line under the label (errors, a note). */
  detail?: string;
}

export interface ReferenceLine {
  value: number;
  label: string;
}

export interface BarPanel {
  kind: "bars";
  title: string;
  subtitle?: string;
  axisLabel: string;
  log: boolean;
  series: Series[];
  groups: BarGroup[];
  references?: ReferenceLine[];
  format: (value: number) => string;
}

export interface TextPanel {
  kind: "text";
  title: string;
  lines: string[];
}

export type Panel = BarPanel | TextPanel;

const PANEL_WIDTH = 620;
const LABEL_WIDTH = 215;
const VALUE_ROOM = 70;
const BAR_HEIGHT = 11;
const GROUP_GAP = 12;
const FONT = "font-family='Helvetica, Arial, sans-serif'";

export const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#999999"];

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function text(x: number, y: number, content: string, attrs = ""): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${escape(content)}</text>`;
}

/** Maps a value to a pixel offset in [0, width], and lists the axis ticks. */
function scaleFor(panel: BarPanel, width: number): { x: (v: number) => number; ticks: number[] } {
  const values = [...panel.groups.flatMap((g) => g.values), ...(panel.references ?? []).map((r) => r.value)].filter(
    (v): v is number => v !== undefined && Number.isFinite(v) && (!panel.log || v > 0),
  );
  if (panel.log) {
    const lo = 10 ** Math.floor(Math.log10(Math.min(...values, 1e9)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...values, lo * 10)));
    const ticks: number[] = [];
    for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
    const span = Math.log10(hi) - Math.log10(lo);
    return { x: (v) => (Math.max(0, Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span) * width, ticks };
  }
  const max = Math.max(...values, 1e-9);
  const step = niceStep(max / 5);
  const hi = Math.ceil(max / step) * step;
  const ticks = Array.from({ length: Math.round(hi / step) + 1 }, (_, i) => i * step);
  return { x: (v) => (Math.max(0, v) / hi) * width, ticks };
}

function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
}

function tickLabel(value: number): string {
  if (value === 0) return "0";
  if (value >= 1000) return value.toLocaleString("en-US", { maximumFractionDigits: 0 });
  return String(Number(value.toPrecision(3)));
}

const groupHeightOf = (panel: BarPanel) => panel.series.length * BAR_HEIGHT + GROUP_GAP + (panel.groups.some((g) => g.detail) ? 4 : 0);
/** Reference-line labels stack above the plot, one line each, so they never overlap. */
const referenceRoomOf = (panel: BarPanel) => (panel.references?.length ?? 0) * 12;

function barPanelHeight(panel: BarPanel): number {
  return 78 + referenceRoomOf(panel) + panel.groups.length * groupHeightOf(panel) + 46;
}

function panelHeight(panel: Panel): number {
  return panel.kind === "bars" ? barPanelHeight(panel) : 44 + panel.lines.length * 16 + 12;
}

function renderText(panel: TextPanel, x0: number, y0: number): string {
  const parts = [text(x0 + 12, y0 + 24, panel.title, `${FONT} font-size="14" font-weight="bold" fill="#222"`)];
  panel.lines.forEach((line, i) => parts.push(text(x0 + 12, y0 + 48 + i * 16, line, `font-family="Menlo, Consolas, monospace" font-size="11" fill="#333" xml:space="preserve"`)));
  return parts.join("\n");
}

function renderBars(panel: BarPanel, x0: number, y0: number, patternIds: Map<string, string>): string {
  const parts: string[] = [];
  const plotX = x0 + LABEL_WIDTH;
  const plotWidth = PANEL_WIDTH - LABEL_WIDTH - VALUE_ROOM;
  const { x, ticks } = scaleFor(panel, plotWidth);
  parts.push(text(x0 + 12, y0 + 22, panel.title, `${FONT} font-size="14" font-weight="bold" fill="#222"`));
  if (panel.subtitle) parts.push(text(x0 + 12, y0 + 39, panel.subtitle, `${FONT} font-size="11" fill="#555"`));
  // Legend, one entry per series, on one line under the title.
  let legendX = x0 + 12;
  for (const series of panel.series) {
    parts.push(`<rect x="${legendX}" y="${y0 + 49}" width="11" height="11" fill="${series.color}"/>`);
    parts.push(text(legendX + 15, y0 + 58.5, series.name, `${FONT} font-size="11" fill="#333"`));
    legendX += 26 + series.name.length * 6.2;
  }
  const plotTop = y0 + 74 + referenceRoomOf(panel);
  const groupHeight = groupHeightOf(panel);
  const plotBottom = plotTop + panel.groups.length * groupHeight;
  for (const tick of ticks) {
    const tx = plotX + x(tick);
    parts.push(`<line x1="${tx.toFixed(1)}" y1="${plotTop - 4}" x2="${tx.toFixed(1)}" y2="${plotBottom}" stroke="#e3e3e3" stroke-width="1"/>`);
    parts.push(text(tx, plotBottom + 14, tickLabel(tick), `${FONT} font-size="10" fill="#555" text-anchor="middle"`));
  }
  parts.push(`<line x1="${plotX}" y1="${plotTop - 4}" x2="${plotX}" y2="${plotBottom}" stroke="#888"/>`);
  parts.push(`<line x1="${plotX}" y1="${plotBottom}" x2="${plotX + plotWidth}" y2="${plotBottom}" stroke="#888"/>`);
  parts.push(text(plotX + plotWidth / 2, plotBottom + 32, panel.axisLabel, `${FONT} font-size="11" fill="#333" text-anchor="middle"`));
  panel.groups.forEach((group, g) => {
    const gy = plotTop + g * groupHeight;
    const labelY = gy + (panel.series.length * BAR_HEIGHT) / 2 + (group.detail ? -1 : 4);
    parts.push(text(plotX - 8, labelY, group.label, `${FONT} font-size="11.5" fill="#222" text-anchor="end"`));
    if (group.detail) parts.push(text(plotX - 8, labelY + 13, group.detail, `${FONT} font-size="10" fill="#B03A2E" text-anchor="end"`));
    group.values.forEach((value, s) => {
      const series = panel.series[s];
      if (value === undefined || !Number.isFinite(value) || !series) return;
      const by = gy + s * BAR_HEIGHT;
      const width = Math.max(1, x(value));
      const fill = group.estimated ? `url(#${patternIds.get(series.color)})` : series.color;
      const outline = group.estimated ? ` stroke="${series.color}" stroke-width="1"` : "";
      parts.push(`<rect x="${plotX}" y="${by + 1}" width="${width.toFixed(1)}" height="${BAR_HEIGHT - 2}" fill="${fill}"${outline}><title>${escape(`${group.label} ${series.name}: ${panel.format(value)}`)}</title></rect>`);
      const label = `${panel.format(value)}${group.estimated ? " (est.)" : ""}`;
      parts.push(text(plotX + width + 4, by + BAR_HEIGHT - 2.5, label, `${FONT} font-size="9.5" fill="#333"`));
    });
  });
  for (const [i, ref] of (panel.references ?? []).entries()) {
    const rx = plotX + x(ref.value);
    const labelY = y0 + 82 + i * 12;
    parts.push(`<line x1="${rx.toFixed(1)}" y1="${labelY - 8}" x2="${rx.toFixed(1)}" y2="${plotBottom}" stroke="#B03A2E" stroke-width="1.2" stroke-dasharray="4 3"/>`);
    const anchor = rx > plotX + plotWidth * 0.6 ? "end" : "start";
    parts.push(text(rx + (anchor === "end" ? -4 : 4), labelY, ref.label, `${FONT} font-size="9.5" fill="#B03A2E" text-anchor="${anchor}"`));
  }
  return parts.join("\n");
}

/** The whole figure as an SVG document: a title, then the panels row by row, `columns` per row. */
export function renderFigure(title: string, subtitle: string, panels: Panel[], columns = 2): string {
  const colors = new Set(panels.flatMap((p) => (p.kind === "bars" ? p.series.map((s) => s.color) : [])));
  const patternIds = new Map([...colors].map((color, i) => [color, `hatch${i}`]));
  const defs = [...patternIds].map(
    ([color, id]) =>
      `<pattern id="${id}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="${color}" fill-opacity="0.25"/><line x1="0" y1="0" x2="0" y2="6" stroke="${color}" stroke-width="3"/></pattern>`,
  );
  const body: string[] = [];
  let y = 64;
  for (let row = 0; row < panels.length; row += columns) {
    const rowPanels = panels.slice(row, row + columns);
    const height = Math.max(...rowPanels.map(panelHeight));
    rowPanels.forEach((panel, i) => {
      const x = 10 + i * (PANEL_WIDTH + 10);
      body.push(`<rect x="${x}" y="${y}" width="${PANEL_WIDTH}" height="${height}" fill="#fff" stroke="#ddd" rx="4"/>`);
      body.push(panel.kind === "bars" ? renderBars(panel, x, y, patternIds) : renderText(panel, x, y));
    });
    y += height + 10;
  }
  const width = 10 + columns * (PANEL_WIDTH + 10);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}">`,
    `<defs>${defs.join("")}</defs>`,
    `<rect width="${width}" height="${y}" fill="#f6f6f6"/>`,
    text(14, 28, title, `${FONT} font-size="19" font-weight="bold" fill="#111"`),
    text(14, 48, subtitle, `${FONT} font-size="11.5" fill="#444"`),
    ...body,
    `</svg>`,
    "",
  ].join("\n");
}
