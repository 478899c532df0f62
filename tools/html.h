/// \file html.h
/// Small helpers for the self-contained HTML of `kiln report`: escaping, anchors, the page's
/// inline style, and Graphviz `dot` run as a subprocess to lay out graphs as inline SVG.
#pragma once

#include <optional>
#include <string>

namespace kiln::tools {

/// Text for HTML element content and attribute values (& < > " ').
std::string html_escape(const std::string& text);
/// A string usable inside an HTML id / DOT id: [A-Za-z0-9_-], everything else as '_'.
std::string html_id(const std::string& text);
/// A DOT double-quoted string's content (backslashes and quotes escaped, newlines as \n).
std::string dot_escape(const std::string& text);

/// Whether Graphviz `dot` can be run (looked up on PATH once).
bool have_dot();
/// Lays out `dot_source` with `dot -Tsvg`; the <svg> element alone (no XML prolog), or nullopt
/// when dot is missing or fails (`error` says why).
std::optional<std::string> dot_to_svg(const std::string& dot_source, std::string* error);

/// `<!DOCTYPE html>` through `<body>`, with the report's inline CSS.
std::string html_page_begin(const std::string& title);
std::string html_page_end();

}  // namespace kiln::tools
