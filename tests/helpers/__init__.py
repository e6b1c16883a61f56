"""What several test modules share: drivers, harnesses and fixtures' building blocks.

A test module never imports another test module (pytest would run the imported tests twice when a
name starts with ``test``, and a helper's home would depend on which test happened to need it
first); helpers live here, one module per subject.
"""
