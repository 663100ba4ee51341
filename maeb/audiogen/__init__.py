"""Audio generation (MMAG): what a text-to-audio system is asked (`request`), the audio files it
returns, cached beside the results (`store`), and the scorers that read them once (`metric` is the
scorer protocol; `distribution` FD/KL/IS on CNN14, `cnn14` the classifier, `clapscore` caption-audio
similarity, `aesthetics` Audiobox Aesthetics, `speech` WER/SPK-SIM/caption leaks, `timing` the
timestamp F1s). The task type is maeb.tasktypes.audio_generation; offline systems are in `systems`."""
