"""neuralforecast's README Quick Start (NBEATS on its bundled AirPassengers),
or with `cv` three models (LSTM, NHITS, TFT) cross-validated over 3 windows.

    python3 scripts/external/neuralforecast_readme.py [cv]
"""
import sys

from neuralforecast import NeuralForecast
from neuralforecast.models import LSTM, NBEATS, NHITS, TFT
from neuralforecast.utils import AirPassengersDF

if sys.argv[1:] == ["cv"]:
    nf = NeuralForecast(models=[LSTM(h=12, input_size=24, max_steps=100),
                                NHITS(h=12, input_size=24, max_steps=100),
                                TFT(h=12, input_size=24, hidden_size=16, max_steps=60)], freq="ME")
    print(nf.cross_validation(df=AirPassengersDF, n_windows=3, step_size=12).tail())
else:
    nf = NeuralForecast(models=[NBEATS(input_size=24, h=12, max_steps=100)], freq="ME")
    nf.fit(df=AirPassengersDF)
    print(nf.predict())
