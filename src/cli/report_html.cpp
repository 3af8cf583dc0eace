// The HTML report: one page, inline CSS and SVG, no script and nothing fetched, so it can
// be mailed or archived as it is. It is also well-formed XML.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "cli/report_format.h"
#include "cli/report_render.h"

namespace kumo::cli {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;max-width:1100px}
h1{font-size:22px}h2{font-size:19px;border-top:2px solid #ccd5df;padding-top:12px}
h3{font-size:16px;margin-bottom:4px}h4{font-size:14px;margin:14px 0 4px;color:#44505c}
.meta,.note{color:#5b6673}.summary{margin:2px 0 8px}
table{border-collapse:collapse;margin:4px 0}
td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
td.n,th.n{text-align:right}code,.mono{font-family:ui-monospace,monospace;font-size:12px}
svg{display:block;margin:4px 0}svg text{font:11px ui-monospace,monospace;fill:#33404d}
)";

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// White through amber to red as a partition's share of its ceiling goes from 0 to 1.
std::string heat_colour(double share) {
  struct Stop {
    double at, r, g, b;
  };
  static constexpr Stop kStops[] = {{0, 238, 243, 248}, {0.5, 253, 212, 158}, {1, 215, 48, 31}};
  share = std::clamp(share, 0.0, 1.0);
  const Stop& lo = share <= 0.5 ? kStops[0] : kStops[1];
  const Stop& hi = share <= 0.5 ? kStops[1] : kStops[2];
  const double f = (share - lo.at) / (hi.at - lo.at);
  auto mix = [f](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b));
}

// The text report's two-space separators as "; ".
std::string sentence(std::string text) {
  for (std::size_t at = text.find("  "); at != std::string::npos; at = text.find("  ", at))
    text.replace(at, 2, "; ");
  return text;
}

std::string percent(double share) {
  return fmt::format("{:.0f} %", share * 100);
}

// A filled rectangle; `title` (escaped here) is its tooltip; `extra` more attributes.
std::string rect(double x, double y, double w, double h, const std::string& fill,
                 const std::string& title = "", const char* extra = "") {
  std::string svg = fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"{}", x, y, w,
      h, fill, extra);
  return svg +
         (title.empty() ? "/>\n" : ">" + fmt::format("<title>{}</title></rect>\n", escape(title)));
}

// ---- the partition heat map ----

struct HeatCell {
  double read = 0, write = 0, share = 0, refused = 0;
};
struct HeatRow {
  std::uint32_t id = 0;
  std::string first, end;  // tokens, "?" when not known
  double born = 0;
  std::vector<std::optional<HeatCell>> cells;
};
struct HeatMap {
  std::vector<std::string> columns;
  std::vector<HeatRow> rows;
  const char* unit;  // what a cell covers: "minute" or "second"
};

// Every partition of the window with its range: the live ones as reported, a split parent
// from its children, newest split first.
std::vector<HeatRow> heat_rows(const Report& report, const ResourceReport& r) {
  std::map<std::uint32_t, HeatRow> rows;
  for (const PartitionReport& p : r.partitions)
    rows[p.id] = HeatRow{p.id, p.first_token, p.end_token, partition_born(report, r, p.id), {}};
  for (auto s = r.splits.rbegin(); s != r.splits.rend(); ++s) {
    const auto low = rows.find(s->low), high = rows.find(s->high);
    HeatRow& parent = rows[s->parent];
    parent.id = s->parent;
    parent.first = low != rows.end() ? low->second.first : "?";
    parent.end = high != rows.end() ? high->second.end : "?";
    parent.born = partition_born(report, r, s->parent);
  }
  for (const MinuteReport& m : r.history)
    for (const PartitionMinute& p : m.partitions)
      if (!rows.contains(p.id)) rows[p.id] = HeatRow{p.id, "?", "?", report.window_start, {}};
  std::vector<HeatRow> ordered;
  for (auto& [id, row] : rows) ordered.push_back(std::move(row));
  std::stable_sort(ordered.begin(), ordered.end(), [](const HeatRow& a, const HeatRow& b) {
    return a.first != b.first ? a.first < b.first : a.born < b.born;
  });
  return ordered;
}

HeatCell heat_cell(const Report& report, double read, double write, double seconds,
                   double refused) {
  const double share = std::max(read / (report.partition_read_units * seconds),
                                write / (report.partition_write_units * seconds));
  return HeatCell{read, write, share, refused};
}

// Columns are the minutes of history; with less than two, the last 60 seconds.
HeatMap heat_map(const Report& report, const ResourceReport& r) {
  HeatMap map{{}, heat_rows(report, r), "minute"};
  if (r.history.size() >= 2) {
    for (const MinuteReport& m : r.history) {
      map.columns.push_back(utc_time(m.minute).substr(11, 5));
      for (HeatRow& row : map.rows) {
        auto& cell = row.cells.emplace_back();
        for (const PartitionMinute& p : m.partitions)
          if (p.id == row.id) cell = heat_cell(report, p.read, p.write, 60, p.throttles);
      }
    }
    return map;
  }
  map.unit = "second";
  for (int s = 0; s < 60; ++s) {
    map.columns.push_back(utc_time(report.now - 60 + s).substr(11, 8));
    for (HeatRow& row : map.rows) {
      auto& cell = row.cells.emplace_back();
      for (const PartitionReport& p : r.partitions) {
        if (p.id != row.id || p.read_per_second.size() != 60 || p.write_per_second.size() != 60)
          continue;
        cell = heat_cell(report, p.read_per_second[s], p.write_per_second[s], 1, 0);
        // Per second only the partition's refusals overall are known: a second at its
        // ceiling in a partition that refused is marked.
        if (cell->share >= 1 && total(p.throttle_events) > 0) cell->refused = 1;
      }
    }
  }
  return map;
}

std::string heat_tooltip(const HeatRow& row, const std::string& column, const HeatCell& c,
                         const char* unit) {
  std::string text = fmt::format(
      "partition {} ({}-{}), {} {}: {} read units, {} write units, {} of the ceiling", row.id,
      row.first, row.end, unit, column, units(c.read), units(c.write), percent(c.share));
  if (c.refused > 0 && std::string_view(unit) == "minute")
    text += fmt::format(", {} refused", grouped(c.refused));
  return text;
}

std::string heat_svg(const Report& report, const ResourceReport& r) {
  const HeatMap map = heat_map(report, r);
  if (map.rows.empty()) return "<p class=\"note\">no partitions</p>\n";
  constexpr double kLabel = 260, kRow = 18, kTop = 16;
  const double cell = std::clamp(760.0 / static_cast<double>(map.columns.size()), 6.0, 48.0);
  const double width = kLabel + cell * static_cast<double>(map.columns.size()) + 4;
  const double height = kTop + kRow * static_cast<double>(map.rows.size()) + 22;
  std::string svg = fmt::format(
      "<svg width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "role=\"img\"><title>partitions by {2}: share of the ceiling used</title>\n",
      width, height, map.unit);
  const std::size_t label_every = std::max<std::size_t>(1, map.columns.size() / 10);
  for (std::size_t c = 0; c < map.columns.size(); c += label_every)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"11\">{}</text>\n",
                       kLabel + cell * static_cast<double>(c), map.columns[c]);
  for (std::size_t i = 0; i < map.rows.size(); ++i) {
    const HeatRow& row = map.rows[i];
    const double y = kTop + kRow * static_cast<double>(i);
    svg += fmt::format("<text x=\"0\" y=\"{:.1f}\">{:<4} {}-{}</text>\n", y + 13, row.id, row.first,
                       row.end);
    for (std::size_t c = 0; c < row.cells.size(); ++c) {
      if (!row.cells[c]) continue;
      const HeatCell& v = *row.cells[c];
      const char* outline = v.refused > 0 ? " stroke=\"#111\" stroke-width=\"2\"" : "";
      svg += rect(kLabel + cell * static_cast<double>(c) + 1, y + 1, cell - 2, kRow - 2,
                  heat_colour(v.share), heat_tooltip(row, map.columns[c], v, map.unit), outline);
    }
  }
  // Legend: five shares, and what an outline means.
  const double legend = height - 16;
  for (int i = 0; i <= 4; ++i)
    svg += rect(kLabel + i * 64.0, legend, 12, 12, heat_colour(i / 4.0)) +
           fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>\n", kLabel + i * 64.0 + 16,
                       legend + 10, percent(i / 4.0));
  svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">outlined: refused</text>\n",
                     kLabel + 5 * 64.0, legend + 10);
  return svg + "</svg>\n";
}

// ---- capacity over time ----

// Throttle events of one direction in a minute (the reason names say Read or Write).
double direction_throttles(const MinuteReport& m, Direction d) {
  const char* word = d == Direction::kRead ? "Read" : "Write";
  double events = 0;
  for (const auto& [reason, count] : m.throttle_events)
    if (reason.find(word) != std::string::npos) events += count;
  return events;
}

// One minute of one direction, in units per second.
struct MinutePoint {
  double average = 0, peak = 0, limit = 0, refused = 0;
};

MinutePoint minute_point(const MinuteReport& m, Direction d) {
  const bool read = d == Direction::kRead;
  return MinutePoint{(read ? m.read : m.write) / 60,
                     read ? m.peak_read_second : m.peak_write_second,
                     read ? m.read_limit : m.write_limit, direction_throttles(m, d)};
}

// The chart's geometry: bars of the minutes from kLeft, values up to `top` over kPlot
// pixels, refusals in a strip below scaled to the most refused minute.
struct Chart {
  static constexpr double kWidth = 760, kPlot = 150, kStrip = 36, kLeft = 70, kTop = 14;
  double bar = 0, top = 1, most_refused = 0;
  double y(double v) const { return kTop + kPlot - v / top * kPlot; }
};

std::string minute_marks(const Chart& chart, double x, const MinuteReport& m,
                         const MinutePoint& p) {
  const double w = std::max(1.0, chart.bar - 2);
  const std::string when = utc_time(m.minute);
  std::string svg = rect(
      x + 1, chart.y(p.average), w, chart.y(0) - chart.y(p.average), "#6b9bd1",
      fmt::format("{}: {}/s average, {} in the busiest second, limit {}, {} "
                  "refused",
                  when, units(p.average), units(p.peak), grouped(p.limit), grouped(p.refused)));
  svg += rect(x + 1, chart.y(p.peak) - 1, w, 2, "#1d4f91");
  if (p.refused > 0)
    svg += rect(x + 1, Chart::kTop + Chart::kPlot + 4, w,
                p.refused / chart.most_refused * (Chart::kStrip - 6), "#d7301f",
                fmt::format("{}: {} refused", when, grouped(p.refused)));
  return svg;
}

// Units per second by minute (bars, the busiest second a dark tick) against the limit (a
// dashed line), refusals as red bars below.
std::string capacity_svg(const ResourceReport& r, Direction d) {
  Chart chart;
  chart.bar = (Chart::kWidth - Chart::kLeft) / static_cast<double>(r.history.size());
  for (const MinuteReport& m : r.history) {
    const MinutePoint p = minute_point(m, d);
    chart.top = std::max({chart.top, p.limit, p.peak});
    chart.most_refused = std::max(chart.most_refused, p.refused);
  }
  const double highest = chart.top;
  chart.top *= 1.1;
  const double bottom = Chart::kTop + Chart::kPlot + Chart::kStrip;
  std::string svg = fmt::format(
      "<svg width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">"
      "<title>{2} units per second by minute against the limit</title>\n"
      "<text x=\"0\" y=\"12\">{2} units/s</text><text x=\"0\" y=\"{3:.0f}\">{4}</text>"
      "<text x=\"0\" y=\"{5:.0f}\">0</text><text x=\"0\" y=\"{6:.0f}\">refused</text>\n",
      Chart::kWidth, bottom + 16, d == Direction::kRead ? "read" : "write", chart.y(highest) + 4,
      grouped(highest), chart.y(0) + 4, bottom - 4);
  std::string limit;
  const std::size_t label_every = std::max<std::size_t>(1, r.history.size() / 10);
  for (std::size_t i = 0; i < r.history.size(); ++i) {
    const MinuteReport& m = r.history[i];
    const MinutePoint p = minute_point(m, d);
    const double x = Chart::kLeft + chart.bar * static_cast<double>(i);
    svg += minute_marks(chart, x, m, p);
    limit += fmt::format("{:.1f},{:.1f} {:.1f},{:.1f} ", x, chart.y(p.limit), x + chart.bar,
                         chart.y(p.limit));
    if (i % label_every == 0)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\">{}</text>\n", x + 1, bottom + 12,
                         utc_time(m.minute).substr(11, 5));
  }
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#d7301f\" stroke-dasharray=\"4 3\"/>\n",
      limit);
  return svg + "</svg>\n";
}

// ---- tables ----

std::string partitions_table(const Report& report, const ResourceReport& r) {
  // Numbers right-aligned: size and the four rates.
  auto cell = [](std::size_t column, const std::string& text, const char* tag) {
    const char* align = column == 1                  ? " class=\"mono\""
                        : column >= 2 && column <= 6 ? " class=\"n\""
                                                     : "";
    return fmt::format("<{0}{1}>{2}</{0}>", tag, align, escape(text));
  };
  std::string html = "<table><tr>";
  for (std::size_t c = 0; c < std::size(kPartitionColumns); ++c)
    html += cell(c, kPartitionColumns[c], "th");
  html += "</tr>\n";
  for (const PartitionReport& p : r.partitions) {
    const std::vector<std::string> row = partition_row(report, r, p);
    html += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) html += cell(c, row[c], "td");
    html += "</tr>\n";
    if (p.hot_key)
      html += fmt::format("<tr><td></td><td colspan=\"8\">hot key {}</td></tr>\n",
                          escape(hot_key_text(p)));
  }
  return html + "</table>\n";
}

std::string keys_table(const char* title, const std::vector<TopKey>& keys, const char* unit) {
  if (keys.empty()) return "";
  std::string html = fmt::format(
      "<h4>{}</h4><table><tr><th>key</th><th class=\"n\">{}</th><th>partition</th><th></th>"
      "</tr>\n",
      title, unit);
  for (std::size_t i = 0; i < std::min(keys.size(), kTopKeys); ++i)
    html += fmt::format(
        "<tr><td><code>{}</code></td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>\n",
        escape(keys[i].key), grouped(keys[i].value), keys[i].partition,
        keys[i].estimate ? "estimate" : "");
  return html + "</table>\n";
}

std::string splits_table(const ResourceReport& r) {
  if (r.splits.empty()) return "<h4>Splits</h4><p class=\"note\">none in the log</p>\n";
  std::string html =
      "<h4>Splits</h4><table><tr><th>time (UTC)</th><th>parent</th><th>children</th>"
      "<th>at token</th><th>cause</th></tr>\n";
  for (const SplitReport& s : r.splits)
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}, {}</td><td class=\"mono\">{}</td><td>{}</td></tr>\n",
        utc_time(s.time), s.parent, s.low, s.high, escape(s.at), escape(s.cause));
  return html + "</table>\n";
}

std::string cost_table(const Report& report, const TableReport& table) {
  std::string html = fmt::format("<h3>{}</h3><table>\n", escape(cost_heading()));
  for (const CostLine& line : cost_lines(report, table))
    html += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n", line.label,
                        line.amount, escape(line.detail));
  return html + fmt::format("</table><p class=\"note\">{}</p>\n", kNotCounted);
}

std::string resource_section(const Report& report, const TableReport& table,
                             const ResourceReport& r) {
  std::string html =
      fmt::format("<h3>{}</h3><p class=\"summary\">{} partitions; {}</p>\n",
                  r.index ? "GSI " + escape(*r.index) : std::string("table"), r.partitions.size(),
                  escape(sentence(resource_summary(report, table, r))));
  html += "<h4>Partitions</h4>\n" + heat_svg(report, r) + partitions_table(report, r);
  html += "<h4>Capacity over time</h4>\n";
  if (r.history.empty()) {
    html += "<p class=\"note\">no history yet</p>\n";
  } else {
    if (r.read.consumed > 0 || r.read.provisioned) html += capacity_svg(r, Direction::kRead);
    if (r.write.consumed > 0 || r.write.provisioned) html += capacity_svg(r, Direction::kWrite);
  }
  html += keys_table("Hottest partition keys (units in the window)", r.accessed_partition_keys,
                     "units");
  html += keys_table("Most throttled partition keys (events in the window)",
                     r.throttled_partition_keys, "events");
  html += keys_table("Hottest keys (units in the window)", r.accessed, "units");
  html += keys_table("Most throttled keys (events in the window)", r.throttled, "events");
  return html + splits_table(r);
}

std::string table_section(const Report& report, const TableReport& table) {
  std::string html = fmt::format("<section><h2>{}</h2><p class=\"summary\">{}, {} items, {}</p>\n",
                                 escape(table.name), escape(table.billing_mode),
                                 grouped(table.item_count), byte_size(table.size_bytes));
  for (const ResourceReport& r : table.resources) html += resource_section(report, table, r);
  return html + cost_table(report, table) + "</section>\n";
}

}  // namespace

std::string render_html(const Report& report) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
      "<title>kumo report</title><style>{}</style></head><body>\n"
      "<h1>Kumo capacity report</h1>\n<p class=\"meta\">kumo {}, capacity {}, {} clock at {} "
      "UTC; window {} s from {} UTC. Partition peaks are the busiest second of the last 60; "
      "cells show the share of a partition's ceiling ({} RCU, {} WCU per second) used.</p>\n",
      kStyle, escape(report.kumo_version), escape(report.capacity_mode), escape(report.clock_mode),
      utc_time(report.now), grouped(report.window_seconds), utc_time(report.window_start),
      grouped(report.partition_read_units), grouped(report.partition_write_units));
  for (const TableReport& table : report.tables) html += table_section(report, table);
  return html + "</body></html>\n";
}

}  // namespace kumo::cli
