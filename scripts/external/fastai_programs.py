# fastai programs on generated data (pip install fastai; 2.8.12 here):
#   python3 fastai_programs.py vision [EPOCHS] [train]   vision_learner(resnet18), fit_one_cycle
#   python3 fastai_programs.py vision_cbs   lr_find, fine_tune with MixUp and GradientAccumulation,
#                                           save/load, ClassificationInterpretation, tta
#   python3 fastai_programs.py tabular      tabular_learner, SaveModelCallback, EarlyStoppingCallback
#   python3 fastai_programs.py collab       collab_learner, dot product and neural
#   python3 fastai_programs.py text         AWD-LSTM language model, its encoder in a classifier
# `train` also scores the training set (Recorder(train_metrics=True)).
import sys

import numpy as np
import pandas as pd

from _two_colour_images import image_folder

what = sys.argv[1]
if what in ("vision", "vision_cbs"):
    from fastai.vision.all import (ClassificationInterpretation, GradientAccumulation, ImageDataLoaders,
                                   Path, Resize, RocAucBinary, F1Score, accuracy, aug_transforms,
                                   error_rate, resnet18, vision_learner)
    path = Path(image_folder("fastai_images"))
    if what == "vision":
        epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
        dls = ImageDataLoaders.from_folder(path, train="train", valid="val", item_tfms=Resize(64), bs=4,
                                           num_workers=0)
        learn = vision_learner(dls, resnet18, pretrained=False, metrics=[accuracy, RocAucBinary(), F1Score()])
        learn.recorder.train_metrics = "train" in sys.argv
        learn.fit_one_cycle(epochs, 1e-3)
        preds, targs = learn.get_preds()
        print("preds", preds.shape, "valid", learn.validate())
    else:
        from fastai.callback.mixup import MixUp
        dls = ImageDataLoaders.from_folder(path, train="train", valid="val", item_tfms=Resize(64),
                                           batch_tfms=aug_transforms(size=48), bs=4, num_workers=0)
        learn = vision_learner(dls, resnet18, pretrained=False, metrics=[accuracy, error_rate])
        print("lr_find", learn.lr_find(num_it=30, show_plot=False))
        learn.fine_tune(2, base_lr=1e-3, freeze_epochs=1, cbs=[MixUp(), GradientAccumulation(8)])
        learn.save("m")
        learn.load("m")
        print("top losses", ClassificationInterpretation.from_learner(learn).top_losses(3))
        print("tta", learn.tta(n=2)[0].shape)
elif what == "tabular":
    from fastai.tabular.all import (Categorify, CategoryBlock, EarlyStoppingCallback, FillMissing, Normalize,
                                    RocAucBinary, SaveModelCallback, TabularDataLoaders, accuracy,
                                    tabular_learner)
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.integers(0, 5, n).astype(str),
                       "d": rng.integers(0, 3, n).astype(str)})
    df["y"] = ((df.a + df.b + (df.c == "1")) > 0.5).astype(int)
    dls = TabularDataLoaders.from_df(df, y_names="y", cat_names=["c", "d"], cont_names=["a", "b"],
                                     procs=[Categorify, FillMissing, Normalize], y_block=CategoryBlock(), bs=64,
                                     valid_idx=list(range(1600, 2000)))
    learn = tabular_learner(dls, layers=[64, 32], n_out=2, metrics=[accuracy, RocAucBinary()],
                            cbs=[SaveModelCallback(monitor="valid_loss"), EarlyStoppingCallback(patience=3)])
    learn.fit_one_cycle(3, 1e-2)
    print("preds", learn.get_preds()[0].shape)
elif what == "collab":
    from fastai.collab import CollabDataLoaders, collab_learner
    rng = np.random.default_rng(0)
    n = 5000
    ratings = pd.DataFrame({"user": rng.integers(0, 200, n), "item": rng.integers(0, 100, n),
                            "rating": rng.integers(1, 6, n).astype(np.float32)})
    dls = CollabDataLoaders.from_df(ratings, bs=64)
    collab_learner(dls, n_factors=16, y_range=(0.5, 5.5)).fit_one_cycle(3, 5e-3, wd=0.1)
    collab_learner(dls, use_nn=True, layers=[32], y_range=(0.5, 5.5)).fit(2, 1e-3)
elif what == "text":
    import random
    from fastai.text.all import (AWD_LSTM, Perplexity, TextDataLoaders, accuracy, language_model_learner,
                                 text_classifier_learner)
    r = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    df = pd.DataFrame({"text": [" ".join(r.choice(words) for _ in range(r.randint(10, 40))) for _ in range(400)],
                       "label": [r.randint(0, 1) for _ in range(400)]})
    dls_lm = TextDataLoaders.from_df(df, text_col="text", is_lm=True, valid_pct=0.2, bs=16, seq_len=32,
                                     num_workers=0)
    learn = language_model_learner(dls_lm, AWD_LSTM, pretrained=False, metrics=[accuracy, Perplexity()])
    learn.fit_one_cycle(1, 1e-2)
    learn.save_encoder("enc")
    dls_clas = TextDataLoaders.from_df(df, text_col="text", label_col="label", valid_pct=0.2, bs=16,
                                       text_vocab=dls_lm.vocab, num_workers=0)
    classifier = text_classifier_learner(dls_clas, AWD_LSTM, pretrained=False, metrics=accuracy)
    classifier.load_encoder("enc")
    classifier.fit_one_cycle(1, 1e-2)
    print("predicted", classifier.predict(df.text[0])[0])
else:
    sys.exit(f"fastai_programs.py: unknown program {what!r}")
