// What the DynamoDB listener and the admin listener share on top of Beast.
#pragma once

#include <boost/beast/core/string.hpp>
#include <chrono>
#include <string_view>

namespace kumo::net {

// How long a closing connection waits for the client to stop sending before it is cut.
inline constexpr auto kLingerTimeout = std::chrono::seconds(2);

inline std::string_view sv(boost::beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace kumo::net
