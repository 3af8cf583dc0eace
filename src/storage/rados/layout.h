// The RADOS back end's layout (docs/scale-out.md, "As built"): which object holds what,
// how its reserved omap keys are made, and the records (outbox entries, transaction
// records) that hold writes still to be applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kumo::storage::rados {

constexpr std::uint8_t kItemsSpace = 1, kIndexesSpace = 2, kStreamSpace = 3, kTtlSpace = 4;
// Each item's version: [T][5][the item key after its [T][1]] -> [u64 instance][u64 n], set
// by every write of the item (a deletion too: the key stays) in the op that writes the item,
// to a value no write ever set before (the writing front end's instance and its count).
// TransactGetItems compares versions, not values (RadosStorage::confirm_reads): an item
// changed and changed back has another version. The key has its item's token where an
// item key has it, so it lives in the item's partition and a split moves it with the item.
// (The engine's own spaces end at 4: codec::Space.)
constexpr std::uint8_t kVersionsSpace = 5;
// A deletion's version (a tombstone) also holds when it was made, [u64 time ns] on the
// engine's clock after the 16 bytes of a version. A tombstone is kept as long as a
// confirmation that read the item before its deletion may run: confirmations that take
// longer than kConfirmWindowNs (from before their first read) are not trusted, and a
// tombstone older than kTombstoneKeptNs is removed (RadosStorage::reclaim_tombstones),
// guarded on its value, so a write of the item meanwhile keeps its version. A deletion
// lands after the write it deletes, which lands after any read that found the item
// without a version; the difference of the two bounds is the margin left for the clocks
// of two front ends to differ and for a deletion to land after it was timed.
constexpr std::int64_t kConfirmWindowNs = 60'000'000'000;
constexpr std::int64_t kTombstoneKeptNs = 600'000'000'000;
constexpr std::size_t kVersionSize = 16, kTombstoneSize = 24;
inline bool is_item_key(std::string_view key) {
  return key.size() > 4 && key[0] == 0 && static_cast<std::uint8_t>(key[4]) == kItemsSpace;
}
inline bool is_version_key(std::string_view key) {
  return key.size() > 4 && key[0] == 0 && static_cast<std::uint8_t>(key[4]) == kVersionsSpace;
}
inline std::string version_key(std::string_view item) {
  std::string out(item);
  out[4] = static_cast<char>(kVersionsSpace);
  return out;
}

inline const std::string kCatalogObject = "kumo.catalog";
// ClientRequestTokens (`meta/tokens/<token>`, engine/shared_transaction_tokens.h) are kept
// apart from the catalog, which every transaction would otherwise write (SDKs send a token
// with each one): in kTokenObjects objects kumo.tokens.<n> of the catalog's namespace, by a
// hash of the key. The objects exist from the first open on (a guard on an object that does
// not exist fails).
inline const std::string kTokensSpace = "meta/tokens/";
inline const std::string kTokensEnd = "meta/tokens0";  // ('0' follows '/')
inline const std::string kTokensObjectPrefix = "kumo.tokens.";
constexpr unsigned kTokenObjects = 16;
// What RadosStorage::scattered_objects names the token objects by (no table's kind).
constexpr char kTokensKind = 'k';
// The object of a key of the tokens' space: FNV-1a of the key, the same in every process.
inline std::string token_object(std::string_view key) {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : key) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return kTokensObjectPrefix + std::to_string(hash % kTokenObjects);
}
inline const std::string kTxnPrefix = "kumo.txn.";  // <hex instance>.<hex sequence>
// A front end's lease object (rados_leases.cpp): kumo.fe.<hex instance>.
inline const std::string kLeasePrefix = "kumo.fe.";
// The lease object's count of its renewals: omap key -> u64, rewritten after each one.
inline const std::string kRenewalsKey = "renewals";
// A transaction record (kumo.txn.*) holds its resolved ops as its data, and two omap keys:
// its state (P pending, C committed, A aborted) and the locks it takes (encoded as the ops
// that remove them). A record without a state was written before transactions took locks:
// committed.
inline const std::string kTxnStateKey = "state";
inline const std::string kTxnLocksKey = "locks";
// Reserved omap keys start with 0xFF, which no key of Kumo's space starts with (table keys
// start with the table id's high byte, 0 for every id below 2^24; the others with "meta/").
inline const std::string kReserved = "\xff";
inline const std::string kMapPrefix = "\xffmap";  // catalog: table id -> partition starts
inline const std::string kCounterPrefix =
    "\xff"
    "c";  // [len u16][counter key][0 base | 1 id]
inline const std::string kOutboxPrefix =
    "\xff"
    "o";  // [u64 instance][u64 sequence] -> ops (before leases: [u64 sequence])
// A table dropped while its stream still had records keeps its partition map, through which
// its stream objects are found, and this key, until the last of those records is trimmed.
inline const std::string kDroppedPrefix =
    "\xff"
    "d";  // catalog: [u32 table] -> ""
// The front ends that hold (or held, until another finished their work) a lease: the
// others look only at these leases.
inline const std::string kFrontEndPrefix =
    "\xff"
    "f";  // catalog: [u64 instance] -> ""
// Every partition holds its range under this key: [u64 start][1][u64 end], or
// [u64 start][0][8 zero bytes] for the last one. Every write to a partition (and every read
// of one) compares it with the range of the map it was located in, so that a front end
// whose map is stale (another split the partition) never writes to, or reads from, an
// object that no longer holds the key. A partition being split holds its range followed by
// 'F' and the split's token ("frozen"): writes wait, reads go on.
inline const std::string kRangeKey =
    "\xff"
    "r";
// The version of its table's definition that a partition's writes must have been made with
// at least ([u64], absent: 0): set by a catalog change that changes what a write of the
// table must do, before the change is announced (Storage::set_definition), only ever
// raised. A partition group that carries a version (WriteBatch::definition) compares it
// lower than its own plus one (omap_cmp LT on the big-endian bytes), in the same op as the
// range key, so a front end that wrote with a definition it took before the change writes
// nothing: it reloads its catalog and writes again. A split copies it to the new partition
// (see kDefinitionsPrefix).
inline const std::string kDefinitionKey =
    "\xff"
    "v";
// The catalog's record of each table's definition version (catalog: [u32 table] -> [u64],
// only ever raised): Storage::set_definition raises it before any partition's. A split
// gives its new partition at least the version it read here, and publishes its map only if
// this key still holds that version (omap_cmp EQ in the publishing op, on the catalog
// object, which holds the map); when it changed, the split raises the new partition to it
// and tries again. So every partition a published map names holds the version the catalog
// had at the publication, and a later raise reads the map after it raised this key: it
// sees the partition and raises it too. No partition is reachable through a published map
// with a definition older than the catalog's.
inline const std::string kDefinitionsPrefix =
    "\xff"
    "e";
// A partition being split keeps this key, whose value is the token its new partition
// starts at and the splitting front end's instance ([u64 token][u64 instance]), from
// before the copy until its moved keys are removed.
inline const std::string kSplitKey =
    "\xff"
    "s";
// A background job (Storage::claim_job) claimed by a front end: catalog: [name] -> [u64
// instance], followed while the holder hands it over (Storage::hand_over_job) by the
// [u64 instance] of the front end it goes to. Another front end claims it once that
// instance is no longer listed (kFrontEndPrefix), which happens when its work has been
// taken over; that takeover also removes the claims naming it as holder.
inline const std::string kJobPrefix =
    "\xff"
    "j";
// A transaction in progress holds each item it reads or writes with this key, in the
// item's partition: [item key] -> the transaction record's name. A write of the item
// compares it absent; a split waits until its partition holds none.
inline const std::string kLockPrefix =
    "\xff"
    "l";
// Stream records are numbered by their item's partition (Storage::stream_partitions). The
// partition keeps the last number it handed out under this key ([u64]), set, and compared
// with the value the writer expected, in the op that writes the changes it numbers.
inline const std::string kStreamCounterKey =
    "\xff"
    "q";
// A number handed out whose records may not be in their stream object yet: [u64 the first
// of them] -> the transaction record's name, or empty for an outbox entry's. Set with the
// number, removed with the outbox entry (or by the transaction's apply op of the
// partition, with its locks): a reader of the partition's records stops below the lowest.
inline const std::string kStreamMarkPrefix =
    "\xff"
    "w";

// A partition made by a split keeps the last number of the partition it was split from,
// as it was when it split ([u64]): both halves number from after it. A reader whose
// stream shards predate the split stops there (RadosStorage::stream_horizon).
inline const std::string kBornKey =
    "\xff"
    "b";
// A split published whose stream shards may not be split yet: catalog: [u32 table][u64 the
// new partition's first token] -> [u64 the last number when it split]. Set in the op that
// publishes the split, removed once the engine has split the shards (Storage::split_noted).
inline const std::string kUnnotedPrefix =
    "\xff"
    "n";

// An item whose write's GSI or TTL entries are still being applied from its outbox entry:
// [item key] -> the outbox entry's key, in the item's partition. Set in the write's
// partition op, removed with the entry (after its maintenance was applied). A write of the
// item compares it absent, as it does the item's lock: the next write of an item waits
// until the entries of the one before it are in place, whichever front end made either, so
// two writes' entries never land out of order (a late put of an entry bringing back one
// the newer write removed). A split waits until its partition holds none.
inline const std::string kHoldPrefix =
    "\xff"
    "h";

// A transaction's first number in a partition: [record name] -> [u64]. Set with the mark,
// only where absent: two front ends that apply one transaction at once (its owner's
// takeover and its restart) number its records once. Removed with the mark.
inline const std::string kStreamNumberedPrefix =
    "\xff"
    "x";

inline void put_u16(std::string* out, std::uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}
inline void put_u32(std::string* out, std::uint32_t v) {
  for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// The catalog's key of a table's definition version (kDefinitionsPrefix).
inline std::string definitions_key(std::uint32_t table) {
  std::string key = kDefinitionsPrefix;
  put_u32(&key, table);
  return key;
}
inline void put_u64(std::string* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}
// Big-endian, the missing bytes of a short `in` read as zero.
inline std::uint64_t get_be(std::string_view in, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    v = (v << 8) | (i < in.size() ? static_cast<unsigned char>(in[i]) : 0u);
  }
  return v;
}
inline std::string table_prefix(std::uint32_t table) {
  std::string out;
  put_u32(&out, table);
  return out;
}
inline std::string space_prefix(std::uint32_t table, std::uint8_t space) {
  std::string out = table_prefix(table);
  out.push_back(static_cast<char>(space));
  return out;
}
inline std::string hex16(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<std::size_t>(i)] = digits[v & 15];
  return out;
}

// Where the key encoding of a number that starts at `at` ends (key.size() when it does not
// end): a zero is one byte (0x02); any other number is a sign marker (0x01 negative, 0x03
// positive), an exponent byte and digit bytes, ended by 0x00 (0xFF for a negative, whose
// bytes are complemented).
inline std::size_t number_end(std::string_view key, std::size_t at) {
  if (at >= key.size()) return key.size();
  const auto marker = static_cast<unsigned char>(key[at]);
  if (marker == 0x02) return at + 1;
  const unsigned char end = marker == 0x01 ? 0xFF : 0x00;
  for (std::size_t i = at + 2; i < key.size(); ++i) {
    if (static_cast<unsigned char>(key[i]) == end) return i + 1;
  }
  return key.size();
}

// The token of a key of a table's items ([T][1][token]...), index entries
// ([T][2][index][token]...), stream records ([T][3][sequence][token]: its item's token; 0
// for a record whose key has none) or TTL schedule ([T][4][enc(expiry)][item key]: its
// item's token), which decides its partition.
inline std::uint64_t key_token(std::string_view key) {
  const auto space = key.size() > 4 ? static_cast<std::uint8_t>(key[4]) : 0;
  if (space == kTtlSpace) return key_token(key.substr(number_end(key, 5)));
  if (space == kStreamSpace) return key.size() >= 21 ? get_be(key.substr(13), 8) : 0;
  const std::size_t at = space == kIndexesSpace ? 9 : 5;
  return key.size() > at ? get_be(key.substr(at), 8) : 0;
}

// A stream record the engine left for the storage to number: [T][3][u64 0][u64 token].
inline bool unnumbered_record(std::string_view key) {
  return key.size() == 21 && key[0] == 0 && static_cast<std::uint8_t>(key[4]) == kStreamSpace &&
         get_be(key.substr(5), 8) == 0;
}
// A stream record's number ([T][3][u64 number][u64 token]).
inline std::uint64_t record_number(std::string_view key) {
  return get_be(key.substr(5), 8);
}
inline void set_record_number(std::string* key, std::uint64_t number) {
  for (int i = 0; i < 8; ++i)
    (*key)[5 + static_cast<std::size_t>(i)] = static_cast<char>(number >> (8 * (7 - i)));
}
inline std::string stream_mark(std::uint64_t first) {
  std::string out = kStreamMarkPrefix;
  put_u64(&out, first);
  return out;
}

// An object: its namespace and name.
struct ObjectRef {
  std::string ns;
  std::string oid;
  bool operator<(const ObjectRef& o) const { return std::tie(ns, oid) < std::tie(o.ns, o.oid); }
  bool operator==(const ObjectRef& o) const { return ns == o.ns && oid == o.oid; }
};

// A write resolved to one omap key of one object.
struct Resolved {
  ObjectRef object;
  bool maintenance = false;
  bool del = false;
  std::string key;
  std::string value;
  // A delta of a table's counter, which any partition of the table may keep.
  bool table_counter = false;
};

// Records (outbox entries and transaction records) hold resolved ops.
std::string encode_ops(const std::vector<const Resolved*>& ops);
// False when `in` is not a whole record.
bool decode_ops(std::string_view in, std::vector<Resolved>* ops);

// The counter key's reserved prefix in an object: every key of this counter starts with it.
std::string counter_prefix(std::string_view counter);

}  // namespace kumo::storage::rados
