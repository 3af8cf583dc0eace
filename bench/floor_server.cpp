// kumo-bench-floor: the least a server can do between its exec and its first answer, as
// the floor under start-up times (bench/README.md). It listens on 127.0.0.1:PORT and
// answers every request, one connection at a time, with an empty ListTables result. It
// uses system calls only and is linked statically, so that what it takes to answer is what
// the machine takes to start a process and carry one request over loopback.
//
//   kumo-bench-floor PORT
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

constexpr char kAnswer[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 17\r\n\r\n"
    "{\"TableNames\":[]}";

// The body length a request head announces (0 without Content-Length).
long content_length(const char* head, const char* end) {
  static constexpr char kName[] = "\r\ncontent-length:";
  constexpr std::size_t kLength = sizeof kName - 1;
  for (const char* p = head; p + kLength <= end; ++p) {
    if (strncasecmp(p, kName, kLength) == 0) return std::strtol(p + kLength, nullptr, 10);
  }
  return 0;
}

// Answers the requests of one connection until the client closes it.
void serve(int connection) {
  char buffer[16384];
  std::size_t used = 0;
  for (;;) {
    const ssize_t got = read(connection, buffer + used, sizeof buffer - used);
    if (got <= 0) return;
    used += static_cast<std::size_t>(got);
    for (;;) {
      const char* head_end = static_cast<const char*>(memmem(buffer, used, "\r\n\r\n", 4));
      if (head_end == nullptr) {
        if (used == sizeof buffer) return;  // a head this long is not a benchmark's
        break;
      }
      const std::size_t request =
          static_cast<std::size_t>(head_end + 4 - buffer) + content_length(buffer, head_end);
      if (request > sizeof buffer) return;
      if (used < request) break;
      if (write(connection, kAnswer, sizeof kAnswer - 1) != sizeof kAnswer - 1) return;
      std::memmove(buffer, buffer + request, used - request);
      used -= request;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int port = argc == 2 ? std::atoi(argv[1]) : 0;
  if (port <= 0 || port > 65535) {
    static constexpr char kUsage[] = "usage: kumo-bench-floor PORT\n";
    (void)!write(2, kUsage, sizeof kUsage - 1);
    return 2;
  }
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      listen(listener, SOMAXCONN) != 0) {
    static constexpr char kTaken[] = "kumo-bench-floor: cannot listen on that port\n";
    (void)!write(2, kTaken, sizeof kTaken - 1);
    return 1;
  }
  for (;;) {
    const int connection = accept(listener, nullptr, nullptr);
    if (connection < 0) continue;
    const int no_delay = 1;
    setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &no_delay, sizeof no_delay);
    serve(connection);
    close(connection);
  }
}
