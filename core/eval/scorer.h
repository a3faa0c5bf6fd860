// The model side of zero-shot evaluation: answers LoglikelihoodRequests (core/eval/tasks) with a
// Transformer, as lm-evaluation-harness's loglikelihood does: the scored sequence is
// (context + continuation) truncated from the left to max_len + 1 tokens; the continuation's
// log-probabilities are summed and `greedy` is true when each continuation token is the argmax.
#pragma once
#include "core/engine/form.h"
#include "core/eval/tasks/loglikelihood.h"
#include "core/model/transformer.h"

namespace moxlab {

// The returned function holds a reference to model; requests are length-sorted and batched.
// form: the MoHD / MoH compute form (a run's execution.form).
LoglikelihoodFn make_model_scorer(Transformer& model, int max_len, int batch_size, Form form = Form::automatic);

}  // namespace moxlab
