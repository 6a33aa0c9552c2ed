#include "adaqp/assign/policy.h"

namespace adaqp {

namespace {

// Uniform: one plan for the run (only the noise key changes per epoch). Random: re-drawn per epoch.
class SchemePolicy : public BitPolicy {
 public:
  SchemePolicy(const Boundary& boundary, int layers, const SchemeOptions& opt)
      : boundary_(boundary),
        layers_(layers),
        opt_(opt),
        plan_(scheme_plan(boundary, layers, opt, 0)) {}

  const QuantPlan& plan(int epoch, const MessageTraces&) override {
    const auto e = static_cast<uint32_t>(epoch);
    if (opt_.scheme == BitScheme::kRandom && e != plan_.epoch) {
      plan_ = scheme_plan(boundary_, layers_, opt_, e);
    }
    plan_.epoch = e;
    return plan_;
  }

  const AssignStats* finish_epoch(const CommStats&, const MessageTraces&) override {
    return nullptr;
  }

 private:
  const Boundary& boundary_;
  int layers_;
  SchemeOptions opt_;
  QuantPlan plan_;
};

}  // namespace

std::unique_ptr<BitPolicy> make_scheme_policy(const Boundary& boundary, int layers,
                                              const SchemeOptions& opt) {
  return std::make_unique<SchemePolicy>(boundary, layers, opt);
}

}  // namespace adaqp
