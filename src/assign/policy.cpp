#include "adaqp/assign/policy.h"

namespace adaqp {

namespace {

// Uniform: one plan for the run (only the noise key changes per epoch). Random: re-drawn per epoch.
class SchemePolicy : public BitPolicy {
 public:
  SchemePolicy(const Part& part, int layers, const SchemeOptions& opt)
      : part_(part), layers_(layers), opt_(opt), plan_(scheme_plan(part, layers, opt, 0)) {}

  const QuantPlan& plan(int epoch, const MessageTraces&) override {
    const auto e = static_cast<uint32_t>(epoch);
    if (opt_.scheme == BitScheme::kRandom && e != plan_.epoch) {
      plan_ = scheme_plan(part_, layers_, opt_, e);
    }
    plan_.epoch = e;
    return plan_;
  }

  const AssignStats* finish_epoch(const CommStats&, const MessageTraces&) override {
    return nullptr;
  }

 private:
  const Part& part_;
  int layers_;
  SchemeOptions opt_;
  QuantPlan plan_;
};

}  // namespace

std::unique_ptr<BitPolicy> make_scheme_policy(const Part& part, int layers,
                                              const SchemeOptions& opt) {
  return std::make_unique<SchemePolicy>(part, layers, opt);
}

}  // namespace adaqp
