"""The application service: everything one ink session runs on and the operations every frontend shares."""
