// An Authenticator that lets every request through, for tests that call Service directly.
#pragma once

#include "api/service.h"

namespace kumo::api::test {

class AllowAll : public Authenticator {
 public:
  void authenticate() const override {}
};

}  // namespace kumo::api::test
