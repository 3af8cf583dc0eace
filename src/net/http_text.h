// ASCII helpers for HTTP header text: names and tokens compare case-insensitively, and
// values are trimmed of optional whitespace (spaces and tabs).
#pragma once

#include <string_view>

namespace kumo::net {

constexpr char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
}

constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

constexpr bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

constexpr std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace kumo::net
