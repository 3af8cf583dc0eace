// `kumo report`'s two renderings of a /report answer.
#pragma once

#include <string>

#include "cli/report_model.h"

namespace kumo::cli {

// The text report: per table, then per GSI, limits, partitions, throttles, hottest keys,
// write amplification and splits; then the table's cost.
std::string render_text(const Report& report);

// One self-contained HTML page (inline CSS and SVG, no script, nothing fetched), also
// well-formed XML.
std::string render_html(const Report& report);

}  // namespace kumo::cli
