// The RADOS back end's iterator: a walk over a range of the key space, forward a page at a
// time, backward from the range's keys read whole.
#include "storage/rados/rados_storage.h"

#include <algorithm>
#include <cstddef>
#include <map>

namespace kumo::storage::rados {

bool RadosIterator::load_forward() {
  entries_.clear();
  at_ = 0;
  whole_ = false;
  while (!exhausted_) {
    resume_ = storage_.skip_empty(resume_, lower_, upper_);
    if (is_version_key(resume_)) {
      // The items' versions are this back end's own keys, which no walk returns.
      resume_ = space_prefix(static_cast<std::uint32_t>(get_be(resume_, 4)), kVersionsSpace + 1);
      continue;
    }
    if (!upper_.empty() && !(resume_ < upper_)) break;
    const RadosStorage::Place place = storage_.locate(resume_);
    std::string to = place.end;
    if (!upper_.empty() && (to.empty() || upper_ < to)) to = upper_;
    bool more = false;
    if (place.scattered) {
      entries_ = storage_.read_scattered(place.table, place.object.oid[0], resume_, to, page_,
                                         &more, keys_only_, &objects_);
      page_ = std::min(page_ * 4, kPageKeys);
    } else if (!place.counters) {
      entries_ = storage_.read_range(place.object, resume_, to, page_, &more, keys_only_);
      page_ = std::min(page_ * 4, kPageKeys);
      if (keys_only_) objects_.assign(entries_.size(), place.object);
    }
    if (storage_.moved(place)) {
      entries_.clear();  // read again in the new map
      continue;
    }
    if (more && !entries_.empty()) {
      resume_ = entries_.back().first + '\0';
    } else if (to.empty() || to == upper_ || to == kReserved) {
      exhausted_ = true;
    } else {
      resume_ = to;
    }
    if (!entries_.empty()) return true;
  }
  exhausted_ = true;
  return false;
}

void RadosIterator::seek(std::string_view target) {
  resume_ = std::max(std::string(target), lower_);
  exhausted_ = false;
  page_ = kFirstPageKeys;
  load_forward();
}

void RadosIterator::next() {
  if (++at_ < entries_.size()) return;
  if (whole_) return;  // the backward read had everything
  load_forward();
}

void RadosIterator::load_backward(std::optional<std::string_view> last) {
  std::vector<std::pair<std::string, std::string>> all;
  std::vector<ObjectRef> objects;
  resume_ = lower_;
  exhausted_ = false;
  page_ = kPageKeys;  // it reads every key of the range
  keys_only_ = true;
  while (load_forward()) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (last && entries_[i].first > *last) {
        exhausted_ = true;
        break;
      }
      all.push_back(std::move(entries_[i]));
      objects.push_back(std::move(objects_[i]));
    }
  }
  keys_only_ = false;
  entries_ = std::move(all);
  objects_ = std::move(objects);
  whole_ = true;
  loaded_ = entries_.size();
  values_ = kFirstPageKeys;
  at_ = entries_.empty() ? 0 : entries_.size() - 1;
  load_values();
}

void RadosIterator::load_values() {
  while (at_ < entries_.size() && at_ < loaded_) {
    const std::size_t from = at_ + 1 >= values_ ? at_ + 1 - values_ : 0;
    values_ = std::min(values_ * 4, kPageKeys);
    std::map<ObjectRef, std::set<std::string>> wanted;
    for (std::size_t i = from; i < loaded_; ++i) wanted[objects_[i]].insert(entries_[i].first);
    std::map<ObjectRef, std::map<std::string, std::string>> found;
    for (const auto& [object, keys] : wanted) found[object] = storage_.read_values(object, keys);
    // Keep the entries whose value was found (a key missing from its object was deleted,
    // or moved by a split: read it where it is now).
    std::size_t kept = from;
    std::optional<std::size_t> stand;  // where the walk stands now
    for (std::size_t i = from; i < loaded_; ++i) {
      auto& values = found[objects_[i]];
      auto it = values.find(entries_[i].first);
      std::optional<std::string> value;
      if (it != values.end()) {
        value = std::move(it->second);
      } else {
        value = storage_.get(entries_[i].first, nullptr);
      }
      if (value) {
        // (A string moved into itself is left empty: only entries that shift are moved.)
        if (kept != i) {
          entries_[kept].first = std::move(entries_[i].first);
          objects_[kept] = objects_[i];
        }
        entries_[kept].second = std::move(*value);
        if (i <= at_) stand = kept;
        ++kept;
      }
    }
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(kept),
                   entries_.begin() + static_cast<std::ptrdiff_t>(loaded_));
    objects_.erase(objects_.begin() + static_cast<std::ptrdiff_t>(kept),
                   objects_.begin() + static_cast<std::ptrdiff_t>(loaded_));
    loaded_ = from;
    if (stand) {
      at_ = *stand;
      return;
    }
    // Every entry up to where the walk stood was gone: it stands before them.
    if (from == 0) {
      at_ = entries_.size();
      return;
    }
    at_ = from - 1;
  }
}

void RadosIterator::prev() {
  if (!whole_) {
    // Came forward: read the range up to here, then step back.
    const std::string here = entries_[at_].first;
    load_backward(here);
  }
  if (at_ == 0) {
    at_ = entries_.size();  // before the first: invalid
    return;
  }
  --at_;
  load_values();
}

}  // namespace kumo::storage::rados
