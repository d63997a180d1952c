"""sbi's truncated sequential NPE (its tutorial "16_implemented_methods",
TSNPE), shrunk: each round thresholds the posterior's density with
sbi.utils.get_density_thresholder and samples the next round from a
RestrictedPrior. The thresholder's closure keeps `log_prob_threshold`, one
element indexed out of the sorted log-probabilities of its 1,000,000
samples: a 0-d view whose storage is the whole 4 MB tensor (sbi 0.27.0,
restriction_estimator.py:512, still so at sbi-dev/sbi 900821dc). Prints the
bytes that view keeps.

    python3 scripts/external/sbi_density_thresholder.py
"""
import torch
from sbi.inference import NPE
from sbi.utils import BoxUniform, RestrictedPrior, get_density_thresholder

torch.manual_seed(0)
prior = BoxUniform(low=torch.zeros(2), high=torch.ones(2))
x_o = torch.tensor([0.5, 0.5])
inference = NPE(prior)
proposal = prior
for _ in range(2):
    theta = proposal.sample((500,))
    x = theta + torch.randn_like(theta) * 0.1
    inference.append_simulations(theta, x).train(force_first_round_loss=True, max_num_epochs=15)
    posterior = inference.build_posterior().set_default_x(x_o)
    accept_reject_fn = get_density_thresholder(posterior, quantile=1e-4)
    proposal = RestrictedPrior(prior, accept_reject_fn, sample_with="rejection")
print("samples", proposal.sample((100,)).shape)
cells = dict(zip(accept_reject_fn.__code__.co_freevars, accept_reject_fn.__closure__))
threshold = cells["log_prob_threshold"].cell_contents
print("log_prob_threshold addresses", threshold.element_size() * threshold.numel(), "B and keeps",
      threshold.untyped_storage().nbytes(), "B")
del threshold, cells  # the closure alone holds it now, as in the tutorial
