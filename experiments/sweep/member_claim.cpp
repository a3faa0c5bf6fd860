#include "experiments/sweep/member_claim.h"

namespace moxlab {

MemberAvailability member_availability(const SweepMember& m, const ClaimPolicy& policy, double now) {
  if (m.status == "finished") return MemberAvailability::finished;
  if (m.status == "pending" || m.status == "killed") return MemberAvailability::free;
  if (m.status == "failed") return policy.retry_failed ? MemberAvailability::free : MemberAvailability::failed;
  // running
  if (worker_process_gone(m.worker)) return MemberAvailability::free;
  const bool stale = !m.heartbeat || now - *m.heartbeat > policy.stale_after_s;
  return stale ? MemberAvailability::free : MemberAvailability::held;
}

}  // namespace moxlab
