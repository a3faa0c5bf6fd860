// Waiting out a busy run store: another process (a sweep worker, an import, someone's sqlite3 shell)
// may hold the write lock longer than a connection's busy timeout. Writes that must not be lost (a
// training's checkpoint record and final status) retry instead of failing.
#pragma once
#include <functional>

namespace moxlab {

// How long a training waits for a locked store where it cannot go on without writing (checkpoint,
// end of run) before it fails.
constexpr double kStoreWaitSeconds = 600;

// Calls write() until it returns without throwing RunStoreBusy, pausing between tries (50 ms, doubling
// up to 2 s), for at most wait_s; then the last RunStoreBusy propagates. Any other error propagates at
// once. on_wait (optional) is called once, before the first pause.
void retry_while_busy(const std::function<void()>& write, double wait_s, const std::function<void()>& on_wait = {});

}  // namespace moxlab
