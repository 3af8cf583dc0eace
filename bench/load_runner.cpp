#include "load_runner.h"

#include <fmt/format.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

namespace kumo::bench {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr std::size_t kMaxSamples = 5;
constexpr std::size_t kReadBuffer = 16384;
constexpr auto kReconnectDelay = std::chrono::milliseconds(20);
constexpr auto kGiveUpAfter = std::chrono::seconds(5);

class Runner {
 public:
  Runner(const RunOptions& options, const OperationSource& source, SigV4Signer& signer)
      : options_(options),
        source_(source),
        signer_(signer),
        // Each runner owns its event loop and touches it from one thread only, so Asio
        // may skip its internal locking.
        io_(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE),
        end_(io_),
        target_(asio::ip::make_address(options.endpoint.host), options.endpoint.port) {
    if (options_.rate > 0) period_ns_ = 1e9 / options_.rate;
  }

  RunResult run() {
    last_answer_ = Clock::now();
    connections_.reserve(options_.connections);
    for (unsigned i = 0; i < options_.connections; ++i) {
      connections_.push_back(std::make_unique<Connection>(io_));
      connect(*connections_.back());
    }
    // A counted run stops at measure_until too, so a dead server cannot hold it forever.
    end_.expires_at(options_.measure_until);
    end_.async_wait([this](error_code error) {
      if (!error) stop_sending();
    });
    if (open_loop() && !counted()) {
      spin();
    } else {
      io_.run();
    }
    result_.unfinished = in_flight_;
    if (open_loop() && !counted()) {
      // Requests that fell due before the end but never found a free connection: the
      // server fell that far behind the schedule.
      const double due_count =
          static_cast<double>((options_.measure_until - options_.start).count()) / period_ns_;
      const auto due_total = static_cast<std::uint64_t>(std::max(0.0, std::ceil(due_count)));
      result_.unsent = due_total > next_ ? due_total - next_ : 0;
    }
    return std::move(result_);
  }

 private:
  struct Connection {
    explicit Connection(asio::io_context& io) : socket(io), retry(io), in(kReadBuffer) {}
    tcp::socket socket;
    asio::steady_timer retry;
    std::string out;
    std::vector<char> in;
    std::size_t in_used = 0;
    std::string body;
    std::optional<ResponseParser> parser;
    Operation op;
    Clock::time_point due;
    Clock::time_point idle_since;  // open loop: when it joined idle_
    bool busy = false;
  };

  bool counted() const { return options_.count != 0; }
  bool open_loop() const { return period_ns_ > 0; }

  Clock::time_point due(std::uint64_t index) const {
    return options_.start +
           std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(index * period_ns_)));
  }

  bool sending_over() const { return stopping_ || (counted() && next_ >= options_.count); }

  void connect(Connection& c) {
    c.socket = tcp::socket(io_);
    c.socket.async_connect(target_, [this, &c](error_code error) {
      if (error) {
        const auto now = Clock::now();
        record_failure("connect: " + error.message(), {}, now);
        if (now - last_answer_ > kGiveUpAfter) {
          // The server is gone; waiting out the run would only count more of the same.
          result_.gave_up = true;
          stop_sending();
          return;
        }
        reconnect_later(c);
        return;
      }
      c.socket.set_option(tcp::no_delay(true), error);
      c.socket.non_blocking(true, error);
      free(c);
    });
  }

  void reconnect_later(Connection& c) {
    error_code ignored;
    c.socket.close(ignored);
    c.in_used = 0;
    c.parser.reset();
    if (sending_over()) {
      finish_if_idle();
      return;
    }
    c.retry.expires_after(kReconnectDelay);
    c.retry.async_wait([this, &c](error_code error) {
      if (!error) connect(c);
    });
  }

  // `c` is connected and carries nothing: give it the next request, or park it.
  void free(Connection& c) {
    if (sending_over()) {
      finish_if_idle();
      return;
    }
    if (!open_loop()) {
      issue(c, Clock::now());
      return;
    }
    const auto next_due = due(next_);
    if (next_due <= Clock::now()) {
      issue(c, next_due);
      return;
    }
    c.idle_since = Clock::now();
    idle_.push_back(&c);
  }

  // Open loop: turns the event loop without sleeping and sends each request the moment
  // it falls due. The load generator has a core of its own, and sleeping until each due
  // time would cost a timer and a wake-up per request (tens of microseconds here), which
  // would be sent late and measured as the server's latency.
  void spin() {
    while (!io_.stopped()) {
      io_.poll();
      const auto now = Clock::now();
      while (!idle_.empty() && !sending_over() && due(next_) <= now) {
        Connection& c = *idle_.back();
        idle_.pop_back();
        const auto due_at = due(next_);
        if (due_at >= options_.measure_from) {
          result_.client_late_max =
              std::max(result_.client_late_max, now - std::max(due_at, c.idle_since));
        }
        issue(c, due_at);
      }
    }
  }

  void issue(Connection& c, Clock::time_point due_at) {
    source_(next_++, c.op);
    c.out.clear();
    append_request(c.out, options_.endpoint, c.op, signer_);
    c.due = due_at;
    c.busy = true;
    ++in_flight_;
    c.parser.emplace(c.body);
    // A request fits in an idle socket's send buffer, so it is written at once; Asio's
    // async_write would post its completion through the event loop for nothing.
    error_code error;
    const std::size_t sent = c.socket.write_some(asio::buffer(c.out), error);
    if (error && error != asio::error::would_block) {
      fail(c, "write: " + error.message());
      return;
    }
    if (!error && sent == c.out.size()) {
      wait_readable(c);
      return;
    }
    asio::async_write(
        c.socket,
        asio::buffer(c.out.data() + (error ? 0 : sent), c.out.size() - (error ? 0 : sent)),
        [this, &c](error_code error, std::size_t) {
          if (error) {
            fail(c, "write: " + error.message());
            return;
          }
          wait_readable(c);
        });
  }

  // Waits for the answer without first trying a read that would find nothing: the
  // server cannot have answered yet, and an empty read is a wasted system call.
  void wait_readable(Connection& c) {
    c.socket.async_wait(tcp::socket::wait_read, [this, &c](error_code error) {
      if (error) {
        fail(c, "read: " + error.message());
        return;
      }
      read(c);
    });
  }

  void read(Connection& c) {
    for (;;) {
      error_code error;
      const std::size_t size =
          c.socket.read_some(asio::buffer(c.in.data() + c.in_used, c.in.size() - c.in_used), error);
      if (error == asio::error::would_block) {
        wait_readable(c);
        return;
      }
      if (error) {
        fail(c, "read: " + error.message());
        return;
      }
      c.in_used += size;
      if (parse(c)) return;
    }
  }

  // Feeds what has been read to the parser; true once the response is complete (or the
  // connection failed), false when more bytes are needed.
  bool parse(Connection& c) {
    boost::beast::error_code error;
    const std::size_t used = c.parser->put(asio::buffer(c.in.data(), c.in_used), error);
    if (used > 0) {
      std::memmove(c.in.data(), c.in.data() + used, c.in_used - used);
      c.in_used -= used;
    }
    if (error && error != boost::beast::http::error::need_more) {
      fail(c, "bad HTTP response: " + error.message());
      return true;
    }
    if (c.parser->is_done()) {
      complete(c);
      return true;
    }
    if (c.in_used == c.in.size()) c.in.resize(c.in.size() * 2);
    return false;
  }

  void complete(Connection& c) {
    const auto now = Clock::now();
    c.busy = false;
    --in_flight_;
    last_answer_ = now;
    const unsigned status = c.parser->status();
    const bool keep_alive = c.parser->keep_alive();
    c.parser.reset();
    if (status != 200) {
      record_failure(fmt::format("HTTP {}", status), c.body, now);
    } else if (const auto wrong =
                   options_.check_body ? check_body(c.op, c.body) : std::string_view{};
               !wrong.empty()) {
      record_failure(std::string(wrong), c.body, now);
    } else if (in_window(now)) {
      ++result_.ok;
      result_.latency.record(static_cast<std::uint64_t>((now - c.due).count()));
    }
    if (!keep_alive) {
      // The server chose to close; reconnecting is part of what it costs.
      ++result_.reconnects;
      error_code ignored;
      c.socket.close(ignored);
      c.in_used = 0;
      if (sending_over()) {
        finish_if_idle();
      } else {
        connect(c);
      }
      return;
    }
    free(c);
  }

  void fail(Connection& c, std::string what) {
    if (c.busy) {
      c.busy = false;
      --in_flight_;
    }
    record_failure(std::move(what), {}, Clock::now());
    reconnect_later(c);
  }

  bool in_window(Clock::time_point at) const {
    return counted() || (at >= options_.measure_from && at < options_.measure_until);
  }

  void record_failure(std::string kind, std::string_view body, Clock::time_point at) {
    ++(in_window(at) ? result_.errors : result_.errors_outside);
    if (result_.error_samples.size() < kMaxSamples) {
      result_.error_samples.push_back(
          body.empty() ? kind : kind + ": " + std::string(body.substr(0, 300)));
    }
    ++result_.error_kinds[std::move(kind)];
  }

  void stop_sending() {
    if (stopping_) return;
    stopping_ = true;
    if (in_flight_ == 0) {
      io_.stop();
      return;
    }
    end_.expires_after(options_.drain);
    end_.async_wait([this](error_code error) {
      if (!error) io_.stop();
    });
  }

  void finish_if_idle() {
    if (in_flight_ == 0 && sending_over()) io_.stop();
  }

  const RunOptions& options_;
  const OperationSource& source_;
  SigV4Signer& signer_;
  asio::io_context io_;
  asio::steady_timer end_;
  tcp::endpoint target_;
  double period_ns_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> idle_;
  Clock::time_point last_answer_;
  std::uint64_t next_ = 0;
  std::uint64_t in_flight_ = 0;
  bool stopping_ = false;
  RunResult result_;
};

}  // namespace

void RunResult::merge(const RunResult& other) {
  ok += other.ok;
  errors += other.errors;
  errors_outside += other.errors_outside;
  for (const auto& [kind, count] : other.error_kinds) error_kinds[kind] += count;
  for (const auto& sample : other.error_samples) {
    if (error_samples.size() < kMaxSamples) error_samples.push_back(sample);
  }
  unfinished += other.unfinished;
  unsent += other.unsent;
  client_late_max = std::max(client_late_max, other.client_late_max);
  reconnects += other.reconnects;
  gave_up = gave_up || other.gave_up;
  latency.merge(other.latency);
}

RunResult run_load(const RunOptions& options, const OperationSource& source, SigV4Signer& signer) {
  if (options.connections == 0) return {};
  Runner runner(options, source, signer);
  return runner.run();
}

}  // namespace kumo::bench
