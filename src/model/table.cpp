#include "model/table.h"

namespace kumo {

std::string_view scalar_type_name(ScalarType type) {
  switch (type) {
    case ScalarType::S:
      return "S";
    case ScalarType::N:
      return "N";
    case ScalarType::B:
      return "B";
  }
  return "";
}

AttrType to_attr_type(ScalarType type) {
  switch (type) {
    case ScalarType::S:
      return AttrType::S;
    case ScalarType::N:
      return AttrType::N;
    case ScalarType::B:
      return AttrType::B;
  }
  return AttrType::S;
}

}  // namespace kumo
