"""An actor-learner loop (IMPALA-style) on torch.multiprocessing: two actor
processes act with a shared-memory copy of the policy (share_memory())
and send rollouts (observations, actions, behaviour logits) through a
multiprocessing Queue, which moves tensors by shared memory; the learner
trains on them, copies its weights into the shared policy under a lock,
and stops the actors when done."""
import torch
import torch.multiprocessing as mp
import torch.nn as nn
from _device import DEVICE  # cuda on the GPU half

OBS, ACTIONS, ROLLOUT = 16, 4, 32


def make_policy():
    return nn.Sequential(nn.Linear(OBS, 64), nn.Tanh(), nn.Linear(64, ACTIONS))


def actor(rank, shared_policy, lock, queue, stop):
    torch.manual_seed(100 + rank)
    local = make_policy()
    while not stop.is_set():
        with lock:
            local.load_state_dict(shared_policy.state_dict())
        obs = torch.randn(ROLLOUT, OBS)
        with torch.no_grad():
            logits = local(obs)
            actions = torch.distributions.Categorical(logits=logits).sample()
        rewards = (actions == obs[:, :ACTIONS].argmax(1)).float()
        try:
            queue.put((obs, actions, logits, rewards), timeout=1)
        except Exception:  # queue full while stopping
            pass


def main():
    torch.manual_seed(0)
    mp.set_start_method("spawn", force=True)
    learner = make_policy().to(DEVICE)  # the actors act on the CPU
    shared = make_policy()
    shared.load_state_dict(learner.state_dict())
    shared.share_memory()
    lock, queue, stop = mp.Lock(), mp.Queue(maxsize=8), mp.Event()
    actors = [mp.Process(target=actor, args=(r, shared, lock, queue, stop)) for r in range(2)]
    for p in actors:
        p.start()
    opt = torch.optim.RMSprop(learner.parameters(), lr=1e-3)
    for update in range(30):
        rollout = queue.get(timeout=60)
        obs, actions, behaviour_logits, rewards = (t.to(DEVICE) for t in rollout)
        del rollout
        logits = learner(obs)
        log_probs = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
        ratio = (log_probs - torch.log_softmax(behaviour_logits, -1).gather(1, actions[:, None]).squeeze(1)).exp()
        loss = -(ratio.clamp(max=1.0).detach() * log_probs * (rewards - rewards.mean())).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        del obs, actions, behaviour_logits, rewards
        if update % 5 == 4:
            with lock:
                shared.load_state_dict(learner.state_dict())
    stop.set()
    # Drain while the actors live: a tensor sent by file descriptor is only
    # received while its sender is alive (torch.multiprocessing's docs).
    while any(p.is_alive() for p in actors):
        try:
            queue.get(timeout=0.1)
        except Exception:  # queue.Empty
            pass
    for p in actors:
        p.join(timeout=30)
    print("loss", round(loss.item(), 4), "exit codes", [p.exitcode for p in actors])


if __name__ == "__main__":
    main()
