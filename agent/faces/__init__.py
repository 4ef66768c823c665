"""The faces people use: the `scout` CLI, chat, headless run, demo, doctor, init, recon without a
model, `scout policy`, and the rendering they share. Faces build on everything; nothing below
imports them."""
