#include "http_client.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <charconv>
#include <stdexcept>

namespace kumo::bench {

Endpoint parse_endpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    throw std::invalid_argument(fmt::format("endpoint '{}' is not HOST:PORT", text));
  }
  Endpoint endpoint;
  endpoint.host = std::string(text.substr(0, colon));
  if (endpoint.host == "localhost") endpoint.host = "127.0.0.1";
  const auto port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  in_addr address{};
  if (error != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535 ||
      inet_pton(AF_INET, endpoint.host.c_str(), &address) != 1) {
    throw std::invalid_argument(fmt::format("endpoint '{}' is not IPV4:PORT", text));
  }
  endpoint.port = static_cast<std::uint16_t>(value);
  endpoint.authority = fmt::format("{}:{}", endpoint.host, endpoint.port);
  return endpoint;
}

void append_request(std::string& out, const Endpoint& endpoint, const Operation& op,
                    SigV4Signer& signer) {
  if (op.target.empty()) {
    out.append("GET / HTTP/1.1\r\nHost: ").append(endpoint.authority);
    out.append("\r\nUser-Agent: kumo-bench\r\n\r\n");
    return;
  }
  signer.sign(endpoint.authority, op.target, op.body, std::chrono::system_clock::now());
  out.append("POST / HTTP/1.1\r\nHost: ").append(endpoint.authority);
  out.append("\r\nContent-Type: ").append(SigV4Signer::kContentType);
  out.append("\r\nX-Amz-Target: ").append(op.target);
  out.append("\r\nX-Amz-Date: ").append(signer.amz_date());
  out.append("\r\nAuthorization: ").append(signer.authorization());
  out.append("\r\nUser-Agent: kumo-bench\r\nContent-Length: ");
  char length[24];
  const auto [end, error] = std::to_chars(length, length + sizeof length, op.body.size());
  (void)error;
  out.append(length, end).append("\r\n\r\n").append(op.body);
}

BlockingClient::~BlockingClient() {
  close();
}

void BlockingClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

bool BlockingClient::connect() {
  if (fd_ >= 0) return true;
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(endpoint_.port);
  inet_pton(AF_INET, endpoint_.host.c_str(), &address.sin_addr);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    close();
    return false;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return true;
}

std::optional<HttpReply> BlockingClient::send(const Operation& op, SigV4Signer& signer,
                                              std::chrono::milliseconds timeout) {
  if (!connect()) return std::nullopt;
  out_.clear();
  append_request(out_, endpoint_, op, signer);
  for (std::size_t sent = 0; sent < out_.size();) {
    const ssize_t n = ::send(fd_, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close();
      return std::nullopt;
    }
    sent += static_cast<std::size_t>(n);
  }

  HttpReply reply;
  ResponseParser parser(reply.body);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[16384];
  for (;;) {
    if (!in_.empty()) {
      boost::beast::error_code error;
      const std::size_t used = parser.put(boost::asio::buffer(in_), error);
      in_.erase(0, used);
      if (error && error != boost::beast::http::error::need_more) {
        close();
        return std::nullopt;
      }
      if (parser.is_done()) break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd waiting{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&waiting, 1, static_cast<int>(left.count())) <= 0) {
      close();
      return std::nullopt;
    }
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) {
      close();
      return std::nullopt;
    }
    in_.append(chunk, static_cast<std::size_t>(n));
  }
  reply.status = parser.status();
  if (!parser.keep_alive()) close();
  return reply;
}

}  // namespace kumo::bench
