provider "google" {
  project = "shop-prod"
  region  = "us-central1"
}

resource "google_compute_instance" "vm" {
  name         = "batch"
  machine_type = "n1-standard-2"
  zone         = "us-central1-a"
  boot_disk {
    initialize_params {
      image = "debian-cloud/debian-12"
    }
  }
  network_interface {
    network = "default"
  }
}

resource "google_storage_bucket" "exports" {
  name     = "shop-exports"
  location = "US"
}
