"""Mixed precision with float16 on CPU, as torch.amp has allowed since 2.3:
autocast(device_type="cpu", dtype=torch.float16), a GradScaler("cpu")
scaling the loss, unscale_ before gradient clipping, steps skipped on
inf/nan (a huge initial scale forces a few), and the scaler's state saved
and restored with the model's."""
import io

import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24, growth_interval=4)
    scales = []
    for step in range(16):
        x, y = torch.randn(32, 64), torch.randint(0, 8, (32,))
        with torch.autocast(device_type="cpu", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        if step == 7:
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "scaler": scaler.state_dict()}, buf)
            buf.seek(0)
            ckpt = torch.load(buf)
            model.load_state_dict(ckpt["model"])
            opt.load_state_dict(ckpt["opt"])
            scaler.load_state_dict(ckpt["scaler"])
            del ckpt, buf
    print("loss", round(loss.item(), 3), "scales", scales[0], scales[-1])


if __name__ == "__main__":
    main()
