#include "adaqp/model/dist_aggregate.h"

#include <torch/autograd.h>
#include <torch/custom_class.h>

#include <optional>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What an aggregation's backward needs besides tensors: its graph (which outlives the autograd
// graph: the trainer owns both) and layer, as a typed IValue in the context's saved data.
struct AggregationRef : torch::CustomClassHolder {
  AggregationRef(DistGraph* graph, int64_t layer) : graph(graph), layer(layer) {}
  DistGraph* graph;
  int64_t layer;
};
const auto kAggregationRefClass = torch::class_<AggregationRef>("adaqp", "AggregationRef");

void save_ref(AutogradContext* ctx, DistGraph* graph, int64_t layer) {
  ctx->saved_data["ref"] = c10::make_intrusive<AggregationRef>(graph, layer);
}

c10::intrusive_ptr<AggregationRef> saved_ref(AutogradContext* ctx) {
  return ctx->saved_data["ref"].toCustomClass<AggregationRef>();
}

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
    save_ref(ctx, graph, layer);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const c10::intrusive_ptr<AggregationRef> ref = saved_ref(ctx);
    DistGraph* graph = ref->graph;
    const int64_t layer = ref->layer;
    const at::Tensor g = grad_outputs[0].contiguous();
    check_rows(g, *graph, "aggregation output gradient");
    at::Tensor dh = at::empty_like(g);
    graph->aggregate_backward(g.data_ptr<float>(), g.size(1), dh.data_ptr<float>(),
                              static_cast<int>(layer));
    return {dh, at::Tensor(), at::Tensor()};
  }
};

// h itself, having started the exchange of its boundary rows. Backward, which autograd runs after
// every use of h (the central and the marginal rows' work), waits for the received rows'
// gradients that EndHaloRows' backward started sending and adds them into h's gradient.
struct BeginHaloRows : public torch::autograd::Function<BeginHaloRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, DistGraph* graph,
                            int64_t layer) {
    check_rows(h, *graph, "halo exchange input");
    graph->begin_halo_rows(h, static_cast<int>(layer));
    save_ref(ctx, graph, layer);
    return h.view_as(h);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    DistGraph* graph = saved_ref(ctx)->graph;
    at::Tensor dh = grad_outputs[0].clone(at::MemoryFormat::Contiguous);
    graph->end_halo_gradients(dh);
    return {dh, at::Tensor(), at::Tensor()};
  }
};

// The rows a layer formed (sent rows x d), having started their exchange. Backward, which autograd
// runs after the layer's owned rows' backward work (created later, so run first), waits for the
// gradients EndHaloRows' backward started sending and returns them as the rows' gradient.
struct BeginFormedRows : public torch::autograd::Function<BeginFormedRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& rows, DistGraph* graph,
                            int64_t layer) {
    graph->begin_formed_rows(rows, static_cast<int>(layer));
    save_ref(ctx, graph, layer);
    ctx->set_materialize_grads(false);  // its output's gradient is never read
    return rows.view_as(rows);
  }

  static variable_list backward(AutogradContext* ctx, variable_list /*grad_outputs*/) {
    return {saved_ref(ctx)->graph->end_formed_gradients(), at::Tensor(), at::Tensor()};
  }
};

// The received rows of the exchange BeginHaloRows (or BeginFormedRows) started over h. Backward
// starts sending their gradients to their owners; h's share arrives in BeginHaloRows' backward, so
// the owned rows' backward work overlaps the exchange. The autograd edge from here to h
// (BeginHaloRows' output, never detached) is what makes autograd run this backward before
// BeginHaloRows'.
struct EndHaloRows : public torch::autograd::Function<EndHaloRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, DistGraph* graph,
                            int64_t layer) {
    save_ref(ctx, graph, layer);
    return graph->end_halo_rows(h);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const c10::intrusive_ptr<AggregationRef> ref = saved_ref(ctx);
    ref->graph->begin_halo_gradients(grad_outputs[0].contiguous(), static_cast<int>(ref->layer));
    return {at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// y = (A h) W^T + b [+ h R^T] as one operation, split by rows: central rows (no halo
// in-neighbours, the first num_central) are final after A_local, so their dense product runs
// while the halo rows travel, the marginal rows' after; the root term h R^T (GraphSAGE) needs no
// halo rows and runs while they travel too. The backward mirrors it: the marginal rows of
// dz = dy W go first (A_halo^T reads only them), then, while the partial gradients travel, the
// central rows of dz, the weight and bias gradients (which need only dy and z = A h) and the root
// term's gradients.
struct DistAggregateLinear : public torch::autograd::Function<DistAggregateLinear> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& h, const at::Tensor& weight,
                            const at::Tensor& bias, const std::optional<at::Tensor>& root_arg,
                            DistGraph* graph, int64_t layer, bool recompute) {
    // Optional, so that autograd takes an absent root term for no input.
    const at::Tensor root = root_arg.value_or(at::Tensor());
    check_rows(h, *graph, "aggregation input");
    const at::Tensor x = h.contiguous();
    const int64_t n = x.size(0), d = x.size(1), central = graph->part().num_central;
    graph->begin_aggregate(x.data_ptr<float>(), d, static_cast<int>(layer));
    at::Tensor z = at::empty_like(x);
    graph->aggregate_local(x.data_ptr<float>(), d, z.data_ptr<float>());
    // Without overlap the halo rows have arrived: adding them first frees them before y exists.
    const bool overlap = graph->overlaps();
    at::Tensor halo_rows;  // kept for the recomputation
    at::Tensor* keep_halo = recompute ? &halo_rows : nullptr;
    if (!overlap) graph->end_aggregate(d, z.data_ptr<float>(), keep_halo);
    at::Tensor y = at::empty({n, weight.size(0)}, x.options());
    at::Tensor y_central = y.narrow(0, 0, central);
    at::addmm_out(y_central, bias, z.narrow(0, 0, central), weight.t());  // what a Linear does
    const at::Tensor rooted = root.defined() ? at::mm(x, root.t()) : at::Tensor();
    if (overlap) graph->end_aggregate(d, z.data_ptr<float>(), keep_halo);
    at::Tensor y_marginal = y.narrow(0, central, n - central);
    at::addmm_out(y_marginal, bias, z.narrow(0, central, n - central), weight.t());
    if (rooted.defined()) y.add_(rooted);
    // z = A h (or, recomputing, the halo rows) in the saved data, not saved variables, so that
    // backward can free it as soon as the weight gradient is made; h where the root gradient or
    // the recomputation needs it.
    ctx->saved_data["z"] = recompute ? halo_rows : z;
    ctx->saved_data["recompute"] = recompute;
    ctx->save_for_backward({weight, root.defined() || recompute ? x : at::Tensor(), root});
    save_ref(ctx, graph, layer);
    return y;
  }

  // grad_outputs by reference: dy is taken out of the engine's list, so that it is freed here as
  // soon as it is no longer needed.
  static variable_list backward(AutogradContext* ctx, variable_list& grad_outputs) {
    const c10::intrusive_ptr<AggregationRef> ref = saved_ref(ctx);
    DistGraph* graph = ref->graph;
    const auto layer = static_cast<int>(ref->layer);
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& weight = saved[0];
    const at::Tensor& x = saved[1];
    const at::Tensor& root = saved[2];
    at::Tensor z = ctx->saved_data["z"].toTensor();
    ctx->saved_data.erase("z");
    if (ctx->saved_data["recompute"].toBool()) {
      const at::Tensor halo_rows = std::move(z);
      z = at::empty_like(x);
      graph->aggregate_again(x.data_ptr<float>(), halo_rows, x.size(1), z.data_ptr<float>());
    }
    at::Tensor dy = std::move(grad_outputs[0]);
    dy = dy.contiguous();
    const int64_t n = dy.size(0), central = graph->part().num_central;
    at::Tensor dz = at::empty({n, weight.size(1)}, dy.options());
    check_rows(dz, *graph, "aggregation output gradient");
    // With overlap the partial gradients travel while the rest is computed; without, they are
    // sent once dy and z are freed.
    const bool overlap = graph->overlaps();
    at::Tensor dz_marginal = dz.narrow(0, central, n - central);
    at::mm_out(dz_marginal, dy.narrow(0, central, n - central), weight);
    if (overlap) graph->begin_aggregate_backward(dz.data_ptr<float>(), dz.size(1), layer);
    at::Tensor dz_central = dz.narrow(0, 0, central);
    at::mm_out(dz_central, dy.narrow(0, 0, central), weight);
    const at::Tensor d_weight = dy.t().mm(z);
    z.reset();
    const at::Tensor d_bias = dy.sum(0);
    at::Tensor d_root, dx_root;
    if (root.defined()) {
      d_root = dy.t().mm(x);
      dx_root = dy.mm(root);
    }
    dy.reset();
    if (!overlap) graph->begin_aggregate_backward(dz.data_ptr<float>(), dz.size(1), layer);
    at::Tensor dh = at::empty_like(dz);
    graph->end_aggregate_backward(dz.data_ptr<float>(), dz.size(1), dh.data_ptr<float>());
    if (dx_root.defined()) dh.add_(dx_root);
    return {dh, d_weight, d_bias, d_root, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor dist_aggregate(const at::Tensor& h, DistGraph& graph, int layer) {
  return DistAggregate::apply(h, &graph, static_cast<int64_t>(layer));
}

at::Tensor dist_halo_rows_begin(const at::Tensor& h, DistGraph& graph, int layer) {
  return BeginHaloRows::apply(h, &graph, static_cast<int64_t>(layer));
}

at::Tensor dist_formed_rows_begin(const at::Tensor& rows, DistGraph& graph, int layer) {
  return BeginFormedRows::apply(rows.contiguous(), &graph, static_cast<int64_t>(layer));
}

at::Tensor dist_halo_rows_end(const at::Tensor& h, DistGraph& graph, int layer) {
  return EndHaloRows::apply(h, &graph, static_cast<int64_t>(layer));
}

at::Tensor dist_aggregate_linear(const at::Tensor& h, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& root, DistGraph& graph,
                                 int layer, bool recompute) {
  return DistAggregateLinear::apply(h, weight, bias,
                                    root.defined() ? std::optional<at::Tensor>(root) : std::nullopt,
                                    &graph, static_cast<int64_t>(layer), recompute);
}

}  // namespace adaqp
