// Exports and imports at start-up (exports.cpp, imports.cpp).
#pragma once

#include "api/service.h"
#include "engine/engine.h"

namespace kumo::api {

// Turns FAILED the exports a stopped process left IN_PROGRESS (their snapshot is gone).
void resume_exports(engine::Engine& engine);
// Runs again the imports a stopped process left IN_PROGRESS (writing an item again is
// harmless: the table is CREATING until the import ends).
void resume_imports(engine::Engine& engine, const ServiceOptions& options);

}  // namespace kumo::api
