"""What every lesson speaks: URL state (Param/Spec), text (words, tokens, the one escaper), the lesson
protocol (Stop/Note/run) and the heavy imports done once (preload). Pure: no streamlit."""
