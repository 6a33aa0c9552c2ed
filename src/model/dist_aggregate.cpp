#include "adaqp/model/dist_aggregate.h"

#include <torch/autograd.h>

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/model/torch_device.h"

namespace adaqp {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_rows(const at::Tensor& t, const DistGraph& graph, const char* what) {
  ADAQP_CHECK(t.scalar_type() == at::kFloat && t.dim() == 2 &&
                  t.device() == torch_device(graph.device()) && t.size(0) == graph.num_owned(),
              std::string(what) + " must be a float32 matrix on " + graph.device().name() +
                  " with one row per owned node (" + std::to_string(graph.num_owned()) + "), got " +
                  t.toString() + " " + std::to_string(t.dim()) + "-d with " +
                  std::to_string(t.dim() > 0 ? t.size(0) : 0) + " rows");
}

struct DistAggregate : public torch::autograd::Function<DistAggregate> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, DistGraph* graph,
                            int64_t layer) {
    check_rows(h, *graph, "aggregation input");
    const at::Tensor x = h.contiguous();
    at::Tensor y = at::empty_like(x);
    graph->aggregate(x.data_ptr<float>(), x.size(1), y.data_ptr<float>(), static_cast<int>(layer));
    // saved_data holds IValues only: the graph (which outlives the autograd graph) goes in as
    // its address.
    ctx->saved_data["graph"] = reinterpret_cast<int64_t>(graph);
    ctx->saved_data["layer"] = layer;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto* graph = reinterpret_cast<DistGraph*>(ctx->saved_data["graph"].toInt());
    const int64_t layer = ctx->saved_data["layer"].toInt();
    const at::Tensor g = grad_outputs[0].contiguous();
    check_rows(g, *graph, "aggregation output gradient");
    at::Tensor dh = at::empty_like(g);
    graph->aggregate_backward(g.data_ptr<float>(), g.size(1), dh.data_ptr<float>(),
                              static_cast<int>(layer));
    return {dh, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor dist_aggregate(const at::Tensor& h, DistGraph& graph, int layer) {
  return DistAggregate::apply(h, &graph, static_cast<int64_t>(layer));
}

}  // namespace adaqp
