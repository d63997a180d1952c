"""Quantization-aware training with torch.ao (eager mode): fuse conv-bn-relu,
prepare_qat inserts fake-quantize observers whose scale and zero-point
buffers update in place each step, observers frozen halfway, then convert to
a quantized int8 model and evaluate."""
import torch
import torch.ao.quantization as tq
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv, self.bn, self.relu = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(32, 4)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(self.quant(x)))))
        return self.dequant(self.fc(torch.flatten(x, 1)))


def main():
    torch.manual_seed(0)
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in torch.backends.quantized.supported_engines else "qnnpack"
    model = Net().train()
    model.qconfig = tq.get_default_qat_qconfig(torch.backends.quantized.engine)
    tq.fuse_modules_qat(model, [["conv", "bn", "relu"]], inplace=True)
    tq.prepare_qat(model, inplace=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(12):
        if step == 6:
            model.apply(tq.disable_observer)
            model.apply(torch.ao.nn.intrinsic.qat.freeze_bn_stats)
        x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 4, (8,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, round(loss.item(), 4))
    quantized = tq.convert(model.eval(), inplace=False)
    with torch.no_grad():
        print("int8 out", tuple(quantized(torch.randn(2, 3, 16, 16)).shape))


if __name__ == "__main__":
    main()
